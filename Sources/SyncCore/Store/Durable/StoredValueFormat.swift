#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The compact binary form in which durable stores (`SQLiteStore`,
/// `PostgresStore`) keep record fields and metadata values in binary columns.
///
/// A blob is one format byte (``version``) followed by one value. A value is a
/// tag byte and its payload:
///
/// | tag | case | payload |
/// |---|---|---|
/// | 0 | null | — |
/// | 1 | string | length (varint), UTF-8 bytes |
/// | 2 | integer | zigzag varint |
/// | 3 | unsigned integer | varint |
/// | 4 | real | 8 bytes, IEEE 754 bits, little-endian |
/// | 5, 6 | false, true | — |
/// | 7 | date | 8 bytes: seconds since 2001-01-01 as IEEE 754 bits, little-endian |
/// | 8 | data | length (varint), bytes |
/// | 9 | array | count (varint), values |
/// | 10 | dictionary | count (varint), then key (length, UTF-8) and value, keys in the order of their UTF-8 bytes |
///
/// Varints are unsigned LEB128. Dates and reals keep every bit, so a value
/// reads back equal to the one written. Nesting deeper than ``maxDepth`` is
/// refused on write and reported as corrupt on read.
package enum StoredValueFormat {
    /// The format byte every blob starts with.
    package static let version: UInt8 = 1
    /// The deepest nesting of arrays and dictionaries stored (codecs accept 256 by default).
    package static let maxDepth = 512

    /// The kind of a stored value: its first byte.
    package enum Tag: UInt8 {
        case null = 0
        case string
        case integer
        case unsignedInteger
        case real
        case falseValue
        case trueValue
        case date
        case data
        case array
        case dictionary
    }

    // MARK: Encoding

    /// The blob for `value`.
    /// - Throws: ``StoreError/Code/invalidArgument`` when `value` nests deeper than ``maxDepth``.
    package static func encode(_ value: SyncValue) throws(StoreError) -> Data {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(64)
        try write(value, to: &bytes, depth: 0)
        return Data(bytes)
    }

    /// The blob for a record's fields (a dictionary value).
    /// - Throws: ``StoreError/Code/invalidArgument`` when a field nests deeper than ``maxDepth``.
    package static func encode(fields: [String: SyncValue]) throws(StoreError) -> Data {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(16 + fields.count * 16)
        try writeDictionary(fields, to: &bytes, depth: 0)
        return Data(bytes)
    }

    /// The blob for a record's fields read from a document, written from its slots without making
    /// ``SyncValue``s: the bytes ``encode(fields:)`` gives for the node's value.
    /// - Returns: `nil` when `node` is not a dictionary or nests deeper than ``maxDepth``.
    package static func encode(fields node: SyncDocument.Node) -> [UInt8]? {
        guard node.kind == .dictionary else { return nil }
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(16 + node.count * 24)
        return node.document.withSlots { slots, input in
            write(slot: node.index, slots: slots, input: input, to: &bytes, depth: 0) != nil ? bytes : nil
        }
    }

    /// Appends the value at `index` of a document's `slots` (over `input`) in the stored form.
    /// - Returns: the index after the value, or `nil` when it nests deeper than ``maxDepth``.
    private static func write(
        slot index: Int, slots: UnsafeBufferPointer<SyncDocument.Slot>, input: UnsafeBufferPointer<UInt8>,
        to bytes: inout [UInt8], depth: Int
    ) -> Int? {
        let slot = slots[index]
        /// The bytes a string or data slot names in the input.
        func bytesOf(_ slot: SyncDocument.Slot) -> UnsafeBufferPointer<UInt8> {
            let start = Int(slot.payload)
            return UnsafeBufferPointer(rebasing: input[start..<start + Int(slot.length)])
        }
        /// Appends the length and the bytes of a string or data slot.
        func appendBytes(of slot: SyncDocument.Slot) {
            writeVarint(UInt64(slot.length), to: &bytes)
            bytes.append(contentsOf: bytesOf(slot))
        }
        switch slot.kind {
        case .null: bytes.append(Tag.null.rawValue)
        case .falseValue: bytes.append(Tag.falseValue.rawValue)
        case .trueValue: bytes.append(Tag.trueValue.rawValue)
        case .integer:
            let integer = Int64(bitPattern: slot.payload)
            bytes.append(Tag.integer.rawValue)
            writeVarint(UInt64(bitPattern: (integer << 1) ^ (integer >> 63)), to: &bytes)
        case .unsignedInteger:
            bytes.append(Tag.unsignedInteger.rawValue)
            writeVarint(slot.payload, to: &bytes)
        case .real:
            bytes.append(Tag.real.rawValue)
            writeFixed(slot.payload, to: &bytes)
        case .date:
            bytes.append(Tag.date.rawValue)
            writeFixed(slot.payload, to: &bytes)
        case .data:
            bytes.append(Tag.data.rawValue)
            appendBytes(of: slot)
        case .asciiString, .string:
            bytes.append(Tag.string.rawValue)
            appendBytes(of: slot)
        case .array:
            guard depth < maxDepth else { return nil }
            bytes.append(Tag.array.rawValue)
            writeVarint(UInt64(slot.length), to: &bytes)
            var element = index + 1
            for _ in 0..<slot.length {
                guard let next = write(slot: element, slots: slots, input: input, to: &bytes, depth: depth + 1) else { return nil }
                element = next
            }
        case .dictionary:
            guard depth < maxDepth else { return nil }
            bytes.append(Tag.dictionary.rawValue)
            writeVarint(UInt64(slot.length), to: &bytes)
            // The keys' slots, in the order of their bytes (the order the stored form keeps).
            var keys: [Int] = []
            keys.reserveCapacity(Int(slot.length))
            var key = index + 1
            for _ in 0..<slot.length {
                keys.append(key)
                key = slots[key + 1].end
            }
            let precedes = { (left: Int, right: Int) in KeyOrder.compare(bytesOf(slots[left]), bytesOf(slots[right])) < 0 }
            if !zip(keys, keys.dropFirst()).allSatisfy(precedes) { keys.sort(by: precedes) }
            for key in keys {
                appendBytes(of: slots[key])
                guard write(slot: key + 1, slots: slots, input: input, to: &bytes, depth: depth + 1) != nil else { return nil }
            }
        }
        return slot.end
    }

    /// Appends `value` in the stored form (its tag and payload, no format byte) to `bytes`: how a codec
    /// that reads straight into the stored form (``StoredFieldsDecoding``) writes a scalar it read.
    /// - Throws: ``StoreError/Code/invalidArgument`` when `value` nests deeper than ``maxDepth``.
    package static func append(_ value: SyncValue, to bytes: inout [UInt8]) throws(StoreError) {
        try write(value, to: &bytes, depth: 0)
    }

    private static func write(_ value: SyncValue, to bytes: inout [UInt8], depth: Int) throws(StoreError) {
        switch value {
        case .null:
            bytes.append(Tag.null.rawValue)
        case .string(let string):
            bytes.append(Tag.string.rawValue)
            writeString(string, to: &bytes)
        case .integer(let integer):
            bytes.append(Tag.integer.rawValue)
            writeVarint(UInt64(bitPattern: (integer << 1) ^ (integer >> 63)), to: &bytes)
        case .unsignedInteger(let integer):
            bytes.append(Tag.unsignedInteger.rawValue)
            writeVarint(integer, to: &bytes)
        case .real(let real):
            bytes.append(Tag.real.rawValue)
            writeFixed(real.bitPattern, to: &bytes)
        case .bool(let flag):
            bytes.append(flag ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case .date(let date):
            bytes.append(Tag.date.rawValue)
            writeFixed(date.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
        case .data(let data):
            bytes.append(Tag.data.rawValue)
            writeVarint(UInt64(data.count), to: &bytes)
            bytes.append(contentsOf: data)
        case .array(let elements):
            guard depth < maxDepth else { throw tooDeep() }
            bytes.append(Tag.array.rawValue)
            writeVarint(UInt64(elements.count), to: &bytes)
            for element in elements { try write(element, to: &bytes, depth: depth + 1) }
        case .dictionary(let entries):
            try writeDictionary(entries, to: &bytes, depth: depth)
        }
    }

    private static func writeDictionary(
        _ entries: [String: SyncValue], to bytes: inout [UInt8], depth: Int
    ) throws(StoreError) {
        guard depth < maxDepth else { throw tooDeep() }
        bytes.append(Tag.dictionary.rawValue)
        writeVarint(UInt64(entries.count), to: &bytes)
        for index in KeyOrder.sortedIndices(of: entries) {
            let (key, value) = entries[index]
            writeString(key, to: &bytes)
            try write(value, to: &bytes, depth: depth + 1)
        }
    }

    private static func writeString(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { utf8 in
            writeVarint(UInt64(utf8.count), to: &bytes)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Appends `value` as an unsigned LEB128 varint: a length or a container's count.
    package static func writeVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Inserts `value` as a varint (``writeVarint(_:to:)``) at `offset` of `bytes`: the count of a
    /// container written before its count was known.
    package static func insertVarint(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
        var length = 1
        while value >> (7 * UInt64(length)) != 0 { length += 1 }
        bytes.insert(contentsOf: repeatElement(0, count: length), at: offset)
        var rest = value
        for index in offset..<(offset + length) {
            bytes[index] = UInt8(truncatingIfNeeded: rest) | (index + 1 < offset + length ? 0x80 : 0)
            rest >>= 7
        }
    }

    private static func writeFixed(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private static func tooDeep() -> StoreError {
        StoreError(.invalidArgument, "a value nests arrays and dictionaries deeper than \(maxDepth) levels")
    }

    // MARK: Decoding

    /// The value stored in `blob`.
    /// - Throws: ``StoreError/Code/corrupt`` when `blob` is not a well-formed blob of this format.
    package static func decode(_ blob: Data) throws(StoreError) -> SyncValue {
        var reader = Reader(bytes: [UInt8](blob))
        try reader.readFormatByte()
        let value = try reader.readValue(depth: 0)
        try reader.requireEnd()
        return value
    }

    /// The record fields stored in `blob`.
    /// - Throws: ``StoreError/Code/corrupt`` when `blob` does not hold a dictionary of this format.
    package static func decodeFields(_ blob: Data) throws(StoreError) -> [String: SyncValue] {
        guard case .dictionary(let fields) = try decode(blob) else {
            throw StoreError(.corrupt, "stored record fields are not a dictionary")
        }
        return fields
    }

    /// The values of the fields named in `names` (`nil` for one the record does not have), the blob
    /// without the fields named in `removing`, and the first field name that `isNoted` accepts (such as
    /// a name a server refuses), read from a record's fields blob in one pass.
    /// - Throws: ``StoreError/Code/corrupt`` when `blob` does not hold a dictionary of this format.
    package static func readFields(
        _ names: [String], removing removed: [String], from blob: [UInt8], noting isNoted: (String) -> Bool = { _ in false }
    ) throws(StoreError) -> (values: [SyncValue?], rest: Data, noted: String?) {
        var reader = Reader(bytes: blob)
        try reader.readFormatByte()
        guard try reader.readTag() == .dictionary else { throw StoreError(.corrupt, "stored record fields are not a dictionary") }
        let count = try reader.readContainerCount(depth: 0)
        let entriesStart = reader.offset
        var values = [SyncValue?](repeating: nil, count: names.count)
        var removedSpans: [Range<Int>] = []
        var noted: String?
        for _ in 0..<count {
            let entryStart = reader.offset
            let key = try reader.readString()
            if noted == nil, isNoted(key) { noted = key }
            if let index = names.firstIndex(of: key) {
                values[index] = try reader.readValue(depth: 1)
            } else {
                try reader.skipValue(depth: 1)
            }
            if removed.contains(key) { removedSpans.append(entryStart..<reader.offset) }
        }
        try reader.requireEnd()
        guard !removedSpans.isEmpty else { return (values, Data(blob), noted) }
        var rest: [UInt8] = [version, Tag.dictionary.rawValue]
        rest.reserveCapacity(blob.count)
        writeVarint(UInt64(count - removedSpans.count), to: &rest)
        var kept = entriesStart
        for span in removedSpans {
            rest.append(contentsOf: blob[kept..<span.lowerBound])
            kept = span.upperBound
        }
        rest.append(contentsOf: blob[kept...])
        return (values, Data(rest), noted)
    }

    /// Reads values from the bytes of one blob: ``decode(_:)``'s reader, and a codec's that writes
    /// stored values without making ``SyncValue``s of them (``StoredFieldsEncoding``), tag by tag.
    package struct Reader {
        let bytes: [UInt8]
        var offset = 0

        /// A reader at the start of `bytes`, a blob with its format byte.
        package init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        /// Reads the format byte, which must be ``version``.
        package mutating func readFormatByte() throws(StoreError) {
            let format = try readByte()
            guard format == StoredValueFormat.version else {
                throw StoreError(.corrupt, "stored value has format \(format), this version reads format \(version)")
            }
        }

        /// Throws unless every byte has been read.
        package func requireEnd() throws(StoreError) {
            guard offset == bytes.count else {
                throw corrupt("\(bytes.count - offset) bytes follow the stored value")
            }
        }

        /// Reads one value, nested in `depth` containers.
        package mutating func readValue(depth: Int) throws(StoreError) -> SyncValue {
            switch try readTag() {
            case .null: return .null
            case .string: return .string(try readString())
            case .integer: return .integer(try readInteger())
            case .unsignedInteger: return .unsignedInteger(try readVarint())
            case .real: return .real(try readReal())
            case .falseValue: return .bool(false)
            case .trueValue: return .bool(true)
            case .date: return .date(try readDate())
            case .data: return .data(Array(try readData()))
            case .array:
                let count = try readContainerCount(depth: depth)
                var elements: [SyncValue] = []
                elements.reserveCapacity(count)
                for _ in 0..<count { elements.append(try readValue(depth: depth + 1)) }
                return .array(elements)
            case .dictionary:
                let count = try readContainerCount(depth: depth)
                var entries = [String: SyncValue](minimumCapacity: count)
                for _ in 0..<count {
                    let key = try readString()
                    let value = try readValue(depth: depth + 1)
                    guard entries.updateValue(value, forKey: key) == nil else {
                        throw corrupt("duplicate dictionary key \(CodecError.quoted(key))")
                    }
                }
                return .dictionary(entries)
            }
        }

        /// Reads past one value, nested in `depth` containers.
        package mutating func skipValue(depth: Int) throws(StoreError) {
            switch try readTag() {
            case .null, .falseValue, .trueValue: break
            case .integer, .unsignedInteger: _ = try readVarint()
            case .real, .date: _ = try readFixed()
            case .string, .data: _ = try readData()
            case .array:
                for _ in 0..<(try readContainerCount(depth: depth)) { try skipValue(depth: depth + 1) }
            case .dictionary:
                for _ in 0..<(try readContainerCount(depth: depth)) {
                    _ = try readData()
                    try skipValue(depth: depth + 1)
                }
            }
        }

        /// Reads the tag of the next value.
        package mutating func readTag() throws(StoreError) -> Tag {
            let tagByte = try readByte()
            guard let tag = Tag(rawValue: tagByte) else { throw corrupt("unknown value tag \(tagByte)") }
            return tag
        }

        /// Reads the payload of an ``Tag/integer``.
        package mutating func readInteger() throws(StoreError) -> Int64 {
            let zigzag = try readVarint()
            return Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
        }

        /// Reads the payload of a ``Tag/real``.
        package mutating func readReal() throws(StoreError) -> Double {
            Double(bitPattern: try readFixed())
        }

        /// Reads the payload of a ``Tag/date``.
        package mutating func readDate() throws(StoreError) -> Date {
            Date(timeIntervalSinceReferenceDate: Double(bitPattern: try readFixed()))
        }

        /// Reads the payload of a ``Tag/data``: its bytes.
        package mutating func readData() throws(StoreError) -> ArraySlice<UInt8> {
            try readSlice(count: try readCount())
        }

        /// Reads the element count of an ``Tag/array`` or ``Tag/dictionary`` nested in `depth` containers.
        package mutating func readContainerCount(depth: Int) throws(StoreError) -> Int {
            guard depth < maxDepth else { throw corrupt("nesting deeper than \(maxDepth) levels") }
            return try readCount()
        }

        /// Reads the payload of a ``Tag/string``, or a dictionary key, and hands its UTF-8 bytes —
        /// checked to be valid — to `body`.
        package mutating func readUTF8<Result>(
            _ body: (UnsafeBufferPointer<UInt8>) throws(CodecError) -> Result
        ) throws -> Result {
            try withUTF8(try readUTF8Range()) { utf8 in try body(utf8) }
        }

        /// Reads the payload of a ``Tag/string``, or a dictionary key: where its UTF-8 bytes — checked to
        /// be valid — are, for ``withUTF8(_:_:)`` and ``compare(_:toUTF8At:)``.
        package mutating func readUTF8Range() throws(StoreError) -> Range<Int> {
            let count = try readCount()
            let range = offset..<(offset + count)
            offset += count
            let isValid = bytes.withUnsafeBufferPointer { buffer in UTF8Validation.isValid(UnsafeBufferPointer(rebasing: buffer[range])) }
            guard isValid else { throw corrupt("a stored string is not valid UTF-8") }
            return range
        }

        /// Hands the bytes at `range` (from ``readUTF8Range()``) to `body`.
        package func withUTF8<Result>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
            try bytes.withUnsafeBufferPointer { buffer in try body(UnsafeBufferPointer(rebasing: buffer[range])) }
        }

        /// How `name` orders against the string at `range` (from ``readUTF8Range()``) by UTF-8 bytes:
        /// negative before it, zero equal, positive after it.
        package func compare(_ name: String, toUTF8At range: Range<Int>) -> Int {
            withUTF8(range) { stored in
                name.utf8.withContiguousStorageIfAvailable { KeyOrder.compare($0, stored) }
                    ?? Array(name.utf8).withUnsafeBufferPointer { KeyOrder.compare($0, stored) }
            }
        }

        private mutating func readByte() throws(StoreError) -> UInt8 {
            guard offset < bytes.count else { throw corrupt("the stored value ends early") }
            defer { offset += 1 }
            return bytes[offset]
        }

        /// Reads a varint: the payload of an ``Tag/unsignedInteger``.
        package mutating func readVarint() throws(StoreError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try readByte()
                guard shift < 64, shift < 63 || byte <= 1 else { throw corrupt("a varint overflows 64 bits") }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        /// A length or count, checked against the bytes left (every element takes at least one byte).
        private mutating func readCount() throws(StoreError) -> Int {
            let count = try readVarint()
            guard count <= UInt64(bytes.count - offset) else {
                throw corrupt("a length of \(count) runs past the end of the stored value")
            }
            return Int(count)
        }

        private mutating func readFixed() throws(StoreError) -> UInt64 {
            var value: UInt64 = 0
            for (index, byte) in try readSlice(count: 8).enumerated() {
                value |= UInt64(byte) << UInt64(index * 8)
            }
            return value
        }

        private mutating func readSlice(count: Int) throws(StoreError) -> ArraySlice<UInt8> {
            guard count <= bytes.count - offset else { throw corrupt("the stored value ends early") }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }

        /// Reads the payload of a ``Tag/string``, or a dictionary key.
        package mutating func readString() throws(StoreError) -> String {
            let count = try readCount()
            let start = offset
            offset += count
            let string = bytes.withUnsafeBufferPointer { buffer in
                UTF8Validation.string(UnsafeBufferPointer(rebasing: buffer[start..<(start + count)]))
            }
            guard let string else { throw corrupt("a stored string is not valid UTF-8") }
            return string
        }

        private func corrupt(_ message: String) -> StoreError {
            StoreError(.corrupt, "stored value at byte \(offset): \(message)")
        }
    }
}
