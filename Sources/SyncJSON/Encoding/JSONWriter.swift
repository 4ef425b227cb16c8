import SyncCore

/// Writes a ``SyncValue`` as compact JSON into a growing byte buffer.
struct JSONWriter {
    /// The output so far.
    var bytes: [UInt8] = []
    /// The deepest nesting of arrays and dictionaries allowed.
    let maxDepth: Int

    init(maxDepth: Int) {
        self.maxDepth = maxDepth
        bytes.reserveCapacity(256)
    }

    /// Appends `value`, nested in `depth` containers.
    mutating func write(_ value: SyncValue, depth: Int) throws(CodecError) {
        switch value {
        case .null: appendASCII("null")
        case .bool(let flag): appendASCII(flag ? "true" : "false")
        case .integer(let integer): writeInteger(integer)
        case .unsignedInteger(let integer): writeUnsigned(integer)
        case .real(let real): try writeReal(real)
        case .string(let string): writeString(string)
        case .date(let date):
            bytes.append(JSONByte.quote)
            try ISO8601DateWriting.append(date, to: &bytes)
            bytes.append(JSONByte.quote)
        case .data(let data):
            bytes.append(JSONByte.quote)
            Base64Encoding.append(data, to: &bytes)
            bytes.append(JSONByte.quote)
        case .array(let elements):
            try enterContainer(depth: depth)
            bytes.append(JSONByte.openBracket)
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(JSONByte.comma) }
                try write(element, depth: depth + 1)
            }
            bytes.append(JSONByte.closeBracket)
        case .dictionary(let entries):
            try enterContainer(depth: depth)
            bytes.append(JSONByte.openBrace)
            if entries.count == 1, let entry = entries.first {
                writeString(entry.key)
                bytes.append(JSONByte.colon)
                try write(entry.value, depth: depth + 1)
            } else {
                for (position, index) in KeyOrder.sortedIndices(of: entries).enumerated() {
                    if position > 0 { bytes.append(JSONByte.comma) }
                    let (key, value) = entries[index]
                    writeString(key)
                    bytes.append(JSONByte.colon)
                    try write(value, depth: depth + 1)
                }
            }
            bytes.append(JSONByte.closeBrace)
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
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
