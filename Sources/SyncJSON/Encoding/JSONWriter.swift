import SyncCore

/// Writes a ``SyncValue`` as compact JSON, through a pointer into the array the encoder returns.
struct JSONWriter {
    /// The output so far.
    var output: ByteOutput
    /// The deepest nesting of arrays and dictionaries allowed.
    let maxDepth: Int
    /// The keys of the dictionaries being written, in order.
    var keyOrder = SortedKeys()

    init(output: ByteOutput, maxDepth: Int) {
        self.output = output
        self.maxDepth = maxDepth
    }

    /// The bytes `write` writes with a writer whose output is sized for about `capacity` bytes.
    /// - Throws: what `write` throws.
    static func bytes<Failure: Error>(
        capacity: Int, maxDepth: Int, _ write: (inout JSONWriter) throws(Failure) -> Void
    ) throws(Failure) -> [UInt8] {
        try ByteOutput.bytes(capacity: capacity) { output throws(Failure) in
            var writer = JSONWriter(output: output, maxDepth: maxDepth)
            defer { output = writer.output }
            try write(&writer)
        }
    }

    /// Appends `value`, nested in `depth` containers.
    mutating func write(_ value: SyncValue, depth: Int) throws(CodecError) {
        switch value {
        case .null: appendASCII("null")
        case .bool(let flag): appendASCII(flag ? "true" : "false")
        case .integer(let integer): writeInteger(integer)
        case .unsignedInteger(let integer): output.appendDecimal(integer)
        case .real(let real): try writeReal(real)
        case .string(let string): writeString(string)
        case .date(let date):
            output.append(JSONByte.quote)
            try ISO8601DateWriting.append(date, to: &output)
            output.append(JSONByte.quote)
        case .data(let data):
            output.append(JSONByte.quote)
            data.withUnsafeBufferPointer { output.appendBase64($0) }
            output.append(JSONByte.quote)
        case .array(let elements):
            try enterContainer(depth: depth)
            output.append(JSONByte.openBracket)
            var first = true
            for element in elements {
                if !first { output.append(JSONByte.comma) }
                first = false
                try write(element, depth: depth + 1)
            }
            output.append(JSONByte.closeBracket)
        case .dictionary(let entries):
            try enterContainer(depth: depth)
            output.append(JSONByte.openBrace)
            if entries.count == 1, let entry = entries.first {
                writeString(entry.key)
                output.append(JSONByte.colon)
                try write(entry.value, depth: depth + 1)
            } else if !entries.isEmpty {
                let run = keyOrder.push(entries)
                for position in run {
                    if position != run.lowerBound { output.append(JSONByte.comma) }
                    let (key, element) = entries[keyOrder.index(at: position)]
                    writeString(key)
                    output.append(JSONByte.colon)
                    try write(element, depth: depth + 1)
                }
                keyOrder.pop(run)
            }
            output.append(JSONByte.closeBrace)
        }
    }

    /// Refuses to open a container past the depth limit.
    func enterContainer(depth: Int) throws(CodecError) {
        if depth >= maxDepth {
            throw .limitExceeded("value nested deeper than \(maxDepth) levels")
        }
    }

    /// Appends the bytes of an ASCII literal.
    @inline(__always)
    mutating func appendASCII(_ literal: StaticString) {
        output.append(literal)
    }
}

/// Estimates of the size of JSON texts, for sizing the output before writing.
enum JSONSize {
    /// The size of `value`'s text, counting no escapes and the longest numbers; below containers deeper
    /// than `maxDepth` (which the writer refuses) it stops counting.
    static func estimate(of value: SyncValue, depth: Int, maxDepth: Int) -> Int {
        switch value {
        case .null: return 4
        case .bool: return 5
        case .integer, .unsignedInteger: return 20
        case .real: return 26
        case .string(let string): return 2 + string.utf8.count
        case .date: return 2 + 27
        case .data(let data): return 2 + (data.count + 2) / 3 * 4
        case .array(let elements):
            guard depth < maxDepth else { return 0 }
            var size = 2 + elements.count
            for element in elements { size &+= estimate(of: element, depth: depth + 1, maxDepth: maxDepth) }
            return size
        case .dictionary(let entries):
            guard depth < maxDepth else { return 0 }
            var size = 2 + entries.count
            for (key, element) in entries {
                size &+= 3 + key.utf8.count
                size &+= estimate(of: element, depth: depth + 1, maxDepth: maxDepth)
            }
            return size
        }
    }
}
