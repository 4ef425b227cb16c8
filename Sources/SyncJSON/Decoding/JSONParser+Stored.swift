import SyncCore

extension JSONParser {
    /// Reads a dictionary whose entries that `isStoredArray` accepts are arrays of dictionaries, each
    /// read straight into a fields blob of ``StoredValueFormat``, as
    /// ``JSONCodec/decodeStoredArrays(_:where:)`` describes; `nil` for anything that path does not read.
    mutating func parseStoredArraysDocument(where isStoredArray: (String) -> Bool) -> StoredArraysDocument? {
        do {
            return try readStoredArraysDocument(where: isStoredArray)
        } catch {
            return nil
        }
    }

    private mutating func readStoredArraysDocument(
        where isStoredArray: (String) -> Bool
    ) throws(CodecError) -> StoredArraysDocument? {
        var document = StoredArraysDocument()
        var reader = StoredFieldsReader()
        let isRead = try readObject { parser, key throws(CodecError) in
            guard document.values[key] == nil, document.storedArrays[key] == nil else { return false }
            if isStoredArray(key) {
                guard let items = try parser.readStoredItems(with: &reader) else { return false }
                document.storedArrays[key] = items
            } else {
                document.values[key] = try parser.parseMemberValue()
            }
            return true
        }
        return isRead ? document : nil
    }

    /// Reads the object that spans the input, with optional white space around it, handing each
    /// member's key to `member`, which reads the member's value; `false` when the input is not an
    /// object or `member` returns `false`.
    private mutating func readObject(
        _ member: (inout JSONParser, String) throws(CodecError) -> Bool
    ) throws(CodecError) -> Bool {
        guard !startsWithByteOrderMark else { return false }
        skipWhitespace()
        guard index < input.count, input[index] == JSONByte.openBrace, limits.maxDepth >= 1, countValue() else { return false }
        index += 1
        skipWhitespace()
        if index < input.count && input[index] == JSONByte.closeBrace {
            index += 1
        } else {
            while true {
                guard index < input.count, input[index] == JSONByte.quote else { return false }
                let key = try parseString()
                skipWhitespace()
                guard index < input.count, input[index] == JSONByte.colon else { return false }
                index += 1
                skipWhitespace()
                guard try member(&self, key) else { return false }
                guard let isClosed = readSeparator(closing: JSONByte.closeBrace) else { return false }
                if isClosed { break }
            }
        }
        skipWhitespace()
        return index == input.count
    }

    /// Parses the value of a member of the object ``readObject(_:)`` reads, which counts against the depth limit.
    private mutating func parseMemberValue() throws(CodecError) -> SyncValue {
        outerDepth = 1
        defer { outerDepth = 0 }
        return try parseValue()
    }

    /// Reads the entries named in `names` of the object that spans the input, skipping the others;
    /// `nil` when the input is not an object or a named entry is malformed.
    mutating func parseEntries(named names: Set<String>) -> [String: SyncValue]? {
        do {
            return try readEntries(named: names)
        } catch {
            return nil
        }
    }

    private mutating func readEntries(named names: Set<String>) throws(CodecError) -> [String: SyncValue]? {
        var entries: [String: SyncValue] = [:]
        let isRead = try readObject { parser, key throws(CodecError) in
            if names.contains(key) {
                entries[key] = try parser.parseMemberValue()
                return true
            }
            return parser.skipValue()
        }
        return isRead ? entries : nil
    }

    /// Moves past one value by its brackets and quotes, without checking what is inside (which
    /// bracket closes which is left to a later full read); `false` when the input ends first.
    private mutating func skipValue() -> Bool {
        // The position is a local: the loop runs over every byte of a page's records.
        let (input, end) = (self.input, self.input.count)
        var position = index
        defer { index = position }
        var depth = 0
        repeat {
            guard position < end else { return false }
            let byte = input[position]
            position += 1
            switch byte {
            case JSONByte.quote:
                while position < end {
                    let inString = input[position]
                    if inString == JSONByte.quote { break }
                    position += inString == JSONByte.backslash ? 2 : 1
                }
                guard position < end else { return false }
                position += 1
            case JSONByte.openBracket, JSONByte.openBrace:
                depth += 1
            case JSONByte.closeBracket, JSONByte.closeBrace:
                depth -= 1
                guard depth >= 0 else { return false }
            case JSONByte.comma where depth == 0, JSONByte.colon where depth == 0:
                return false
            default:
                // A scalar's bytes, or white space: a scalar at the top ends at what follows it.
                if depth == 0 {
                    while position < end && !Self.endsScalar(input[position]) { position += 1 }
                }
            }
        } while depth > 0
        return true
    }

    /// Whether `byte` ends a scalar skipped by ``skipValue()``.
    private static func endsScalar(_ byte: UInt8) -> Bool {
        byte == JSONByte.comma || byte == JSONByte.closeBrace || byte == JSONByte.closeBracket || JSONByte.isWhitespace(byte)
    }

    /// Counts one more value against the limit; `false` past it.
    private mutating func countValue() -> Bool {
        elementCount += 1
        return elementCount <= limits.maxElementCount
    }

    /// Reads an array of dictionaries (the document's dictionary is open around it), each into a
    /// fields blob; `nil` when it is not one.
    private mutating func readStoredItems(with reader: inout StoredFieldsReader) throws(CodecError) -> [[UInt8]]? {
        guard index < input.count, input[index] == JSONByte.openBracket, limits.maxDepth >= 2, countValue() else { return nil }
        index += 1
        skipWhitespace()
        var items: [[UInt8]] = []
        if index < input.count && input[index] == JSONByte.closeBracket {
            index += 1
            return items
        }
        while true {
            guard let item = try readStoredFields(with: &reader) else { return nil }
            items.append(item)
            guard let isClosed = readSeparator(closing: JSONByte.closeBracket) else { return nil }
            if isClosed { return items }
        }
    }

    /// Reads what follows a member of an object or an element of an array, and the white space
    /// around it: `true` for `closing`, `false` for a comma, `nil` for anything else.
    private mutating func readSeparator(closing: UInt8) -> Bool? {
        skipWhitespace()
        guard index < input.count else { return nil }
        let byte = input[index]
        index += 1
        if byte == closing { return true }
        guard byte == JSONByte.comma else { return nil }
        skipWhitespace()
        return false
    }

    /// Reads one dictionary (two containers are open around it) into a fields blob; `nil` when it is
    /// not a dictionary or holds twice the same key.
    ///
    /// Each value is written in the stored form as it is read. A container's count is inserted after
    /// its tag when it closes, and a dictionary's entries are put in the order of their keys' bytes
    /// then (JSON from Anchorage's writer is already in that order, and is left as it is).
    private mutating func readStoredFields(with reader: inout StoredFieldsReader) throws(CodecError) -> [UInt8]? {
        guard index < input.count, input[index] == JSONByte.openBrace else { return nil }
        let depthAround = 2
        var out: [UInt8] = [StoredValueFormat.version]
        out.reserveCapacity(256)
        nextValue: while true {
            skipWhitespace()
            guard index < input.count, countValue() else { return nil }
            switch input[index] {
            case JSONByte.openBracket, JSONByte.openBrace:
                let isDictionary = input[index] == JSONByte.openBrace
                guard depthAround + reader.open.count < limits.maxDepth, reader.open.count < StoredValueFormat.maxDepth else {
                    return nil
                }
                index += 1
                out.append((isDictionary ? StoredValueFormat.Tag.dictionary : .array).rawValue)
                skipWhitespace()
                if index < input.count && input[index] == (isDictionary ? JSONByte.closeBrace : JSONByte.closeBracket) {
                    index += 1
                    out.append(0)  // the count of an empty container
                } else {
                    reader.open.append(
                        StoredFieldsReader.Container(isDictionary: isDictionary, countOffset: out.count, firstEntry: reader.entries.count))
                    if isDictionary {
                        guard try readStoredKey(into: &out, with: &reader) else { return nil }
                    }
                    continue nextValue
                }
            case JSONByte.quote:
                out.append(StoredValueFormat.Tag.string.rawValue)
                let range = try parseStringUTF8()
                appendString(range, to: &out)
            case JSONByte.minus, JSONByte.zero...JSONByte.nine:
                let number = try parseNumber()
                do { try StoredValueFormat.append(number, to: &out) } catch { return nil }
            case UInt8(ascii: "t"):
                try parseLiteral("true")
                out.append(StoredValueFormat.Tag.trueValue.rawValue)
            case UInt8(ascii: "f"):
                try parseLiteral("false")
                out.append(StoredValueFormat.Tag.falseValue.rawValue)
            case UInt8(ascii: "n"):
                try parseLiteral("null")
                out.append(StoredValueFormat.Tag.null.rawValue)
            default:
                return nil
            }

            // A value is complete: count it in the innermost container, closing containers for as long
            // as their closing bracket follows.
            while !reader.open.isEmpty {
                reader.open[reader.open.count - 1].count += 1
                let container = reader.open[reader.open.count - 1]
                skipWhitespace()
                guard index < input.count else { return nil }
                let byte = input[index]
                index += 1
                if byte == JSONByte.comma {
                    skipWhitespace()
                    if container.isDictionary {
                        guard try readStoredKey(into: &out, with: &reader) else { return nil }
                    }
                    continue nextValue
                }
                guard byte == (container.isDictionary ? JSONByte.closeBrace : JSONByte.closeBracket) else { return nil }
                reader.open.removeLast()
                if container.isDictionary {
                    guard reader.sortEntries(from: container.firstEntry, in: &out) else { return nil }
                }
                StoredValueFormat.insertVarint(UInt64(container.count), at: container.countOffset, in: &out)
            }
            return out
        }
    }

    /// Reads a dictionary's key and the `:` after it, and writes the key; `false` when there is no key there.
    private mutating func readStoredKey(into out: inout [UInt8], with reader: inout StoredFieldsReader) throws(CodecError) -> Bool {
        guard index < input.count, input[index] == JSONByte.quote else { return false }
        let start = out.count
        let range = try parseStringUTF8()
        let keyLength = appendString(range, to: &out)
        let keyStart = out.count - keyLength
        reader.entries.append(
            StoredFieldsReader.Entry(start: start, keyStart: keyStart, keyLength: keyLength, isASCII: out[keyStart...].allSatisfy { $0 < 0x80 }))
        skipWhitespace()
        guard index < input.count, input[index] == JSONByte.colon else { return false }
        index += 1
        return true
    }

    /// Writes a string's length and UTF-8 bytes (from the input, or ``scratch`` for `nil`); returns the length.
    @discardableResult
    private func appendString(_ range: Range<Int>?, to out: inout [UInt8]) -> Int {
        if let range {
            StoredValueFormat.writeVarint(UInt64(range.count), to: &out)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: input[range]))
            return range.count
        }
        StoredValueFormat.writeVarint(UInt64(scratch.count), to: &out)
        out.append(contentsOf: scratch)
        return scratch.count
    }
}

/// The containers a reader of stored fields has open in one dictionary, and the entries of the open
/// dictionaries, innermost last; kept from one dictionary to the next so that their room is reused.
struct StoredFieldsReader {
    /// An open array or dictionary.
    struct Container {
        let isDictionary: Bool
        /// Where its count goes in the output: just after its tag.
        let countOffset: Int
        /// Where its entries start in ``StoredFieldsReader/entries``, for a dictionary.
        let firstEntry: Int
        /// How many of its elements have been read.
        var count = 0

        init(isDictionary: Bool, countOffset: Int, firstEntry: Int) {
            self.isDictionary = isDictionary
            self.countOffset = countOffset
            self.firstEntry = firstEntry
        }
    }

    /// A dictionary entry written: where it starts (its key's length), where its key's bytes are, and
    /// whether they are all ASCII.
    struct Entry {
        let start: Int
        let keyStart: Int
        let keyLength: Int
        let isASCII: Bool
    }

    var open: [Container] = []
    var entries: [Entry] = []

    /// Puts the entries of the dictionary that just closed — from `first` to the end of `out` — in the
    /// order of their keys' bytes, and drops them from ``entries``; `false` when two keys are the same
    /// (as decoding compares them: as Swift strings, so two spellings of one accented letter are one key).
    mutating func sortEntries(from first: Int, in out: inout [UInt8]) -> Bool {
        defer { entries.removeSubrange(first...) }
        let closed = entries[first...]
        if !closed.allSatisfy(\.isASCII) {
            let keys = out.withUnsafeBufferPointer { bytes in
                Set(closed.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0.keyStart..<($0.keyStart + $0.keyLength)]), as: UTF8.self) })
            }
            if keys.count < closed.count { return false }
        }
        let isInOrder = out.withUnsafeBufferPointer { bytes in
            zip(closed, closed.dropFirst()).allSatisfy { Self.compare($0, $1, in: bytes) < 0 }
        }
        guard !isInOrder, let regionStart = closed.first?.start else { return true }
        let order = out.withUnsafeBufferPointer { bytes in
            closed.indices.sorted { Self.compare(closed[$0], closed[$1], in: bytes) < 0 }
        }
        let hasDuplicate = out.withUnsafeBufferPointer { bytes in
            zip(order, order.dropFirst()).contains { Self.compare(closed[$0], closed[$1], in: bytes) == 0 }
        }
        if hasDuplicate { return false }
        // Each entry runs to the next one's start, the last to the end of the output.
        let original = Array(out[regionStart...])
        let end = out.count
        out.removeSubrange(regionStart...)
        for index in order {
            let entryEnd = index + 1 < entries.endIndex ? entries[index + 1].start : end
            out.append(contentsOf: original[(closed[index].start - regionStart)..<(entryEnd - regionStart)])
        }
        return true
    }

    /// How two entries' keys compare, byte by byte.
    private static func compare(_ first: Entry, _ second: Entry, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        KeyOrder.compare(
            UnsafeBufferPointer(rebasing: bytes[first.keyStart..<(first.keyStart + first.keyLength)]),
            UnsafeBufferPointer(rebasing: bytes[second.keyStart..<(second.keyStart + second.keyLength)]))
    }
}
