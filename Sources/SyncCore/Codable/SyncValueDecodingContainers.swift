/// The keyed container of ``SyncValueDecoding``: reads a dictionary's entries.
struct SyncKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: SyncValueDecoding
    let entries: [String: SyncValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

    private func value(_ key: Key) throws -> SyncValue {
        guard let value = entries[key.stringValue] else { throw SyncDecodingErrors.missingKey(key, at: codingPath) }
        return value
    }

    /// The value under `key` unless it is missing or null.
    private func presentValue(_ key: Key) -> SyncValue? {
        guard let value = entries[key.stringValue] else { return nil }
        if case .null = value { return nil }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try value(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try SyncScalarDecoding.bool(value(key), at: codingPath + [key])
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try SyncScalarDecoding.string(value(key), at: codingPath + [key])
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try SyncScalarDecoding.double(value(key), at: codingPath + [key])
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try SyncScalarDecoding.float(value(key), at: codingPath + [key])
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try integer(type, key) }

    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value {
        try decoder.decodeNested(type, from: value(key), at: codingPath + [key])
    }

    private func integer<Integer: FixedWidthInteger>(_ type: Integer.Type, _ key: Key) throws -> Integer {
        try SyncScalarDecoding.integer(type, value(key), at: codingPath + [key])
    }

    // `decodeIfPresent` is spelled out so that an optional costs one lookup, not three.

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try presentValue(key).map { try SyncScalarDecoding.bool($0, at: codingPath + [key]) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try presentValue(key).map { try SyncScalarDecoding.string($0, at: codingPath + [key]) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try presentValue(key).map { try SyncScalarDecoding.double($0, at: codingPath + [key]) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try presentValue(key).map { try SyncScalarDecoding.float($0, at: codingPath + [key]) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? { try optionalInteger(type, key) }

    func decodeIfPresent<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value? {
        guard let value = presentValue(key) else { return nil }
        return try decoder.decodeNested(type, from: value, at: codingPath + [key])
    }

    private func optionalInteger<Integer: FixedWidthInteger>(_ type: Integer.Type, _ key: Key) throws -> Integer? {
        try presentValue(key).map { try SyncScalarDecoding.integer(type, $0, at: codingPath + [key]) }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try value(key)
        guard case .dictionary(let nested) = value else {
            throw SyncDecodingErrors.mismatch(
                [String: SyncValue].self, expected: "a dictionary", found: value, at: codingPath + [key])
        }
        return KeyedDecodingContainer(
            SyncKeyedDecodingContainer<NestedKey>(decoder: decoder, entries: nested, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let path = codingPath + [key]
        return SyncUnkeyedDecodingContainer(
            decoder: decoder, elements: try SyncValueDecoding.elements(of: value(key), at: path), codingPath: path)
    }

    func superDecoder() throws -> any Decoder {
        decoder.makeSuperDecoder(
            for: entries[SyncCodingKey.super.stringValue] ?? .null, at: codingPath + [SyncCodingKey.super])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        decoder.makeSuperDecoder(for: entries[key.stringValue] ?? .null, at: codingPath + [key])
    }
}

/// The unkeyed container of ``SyncValueDecoding``: reads an array's elements in order.
///
/// The index moves on only when a decode succeeds, as `UnkeyedDecodingContainer` requires.
struct SyncUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: SyncValueDecoding
    let elements: [SyncValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(decoder: SyncValueDecoding, elements: [SyncValue], codingPath: [any CodingKey]) {
        self.decoder = decoder
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var currentPath: [any CodingKey] { codingPath + [SyncCodingKey.index(currentIndex)] }

    /// The current element, or `valueNotFound` past the end.
    private func current(_ type: Any.Type) throws -> SyncValue {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: currentPath, debugDescription: "The array has no element \(currentIndex)"))
        }
        return elements[currentIndex]
    }

    /// Decodes the current element with `read` and moves on.
    private mutating func next<Value>(
        _ type: Value.Type, _ read: (SyncValue, @autoclosure () -> [any CodingKey]) throws -> Value
    ) throws -> Value {
        let value = try read(current(type), currentPath)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard case .null = try current(Never.self) else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type, SyncScalarDecoding.bool) }
    mutating func decode(_ type: String.Type) throws -> String { try next(type, SyncScalarDecoding.string) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type, SyncScalarDecoding.double) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type, SyncScalarDecoding.float) }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try integer(type) }

    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        let decoder = decoder
        return try next(type) { value, path in try decoder.decodeNested(type, from: value, at: path()) }
    }

    private mutating func integer<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> Integer {
        try next(type) { value, path in try SyncScalarDecoding.integer(type, value, at: path()) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let decoder = decoder
        return try next(KeyedDecodingContainer<NestedKey>.self) { value, path in
            guard case .dictionary(let entries) = value else {
                throw SyncDecodingErrors.mismatch(
                    [String: SyncValue].self, expected: "a dictionary", found: value, at: path())
            }
            return KeyedDecodingContainer(
                SyncKeyedDecodingContainer<NestedKey>(decoder: decoder, entries: entries, codingPath: path()))
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let decoder = decoder
        return try next((any UnkeyedDecodingContainer).self) { value, path in
            SyncUnkeyedDecodingContainer(
                decoder: decoder, elements: try SyncValueDecoding.elements(of: value, at: path()), codingPath: path())
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = decoder
        return try next((any Decoder).self) { value, path in decoder.makeSuperDecoder(for: value, at: path()) }
    }
}

/// The single-value container of ``SyncValueDecoding``: reads the value being decoded.
struct SyncSingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoder: SyncValueDecoding
    let value: SyncValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try SyncScalarDecoding.bool(value, at: codingPath) }
    func decode(_ type: String.Type) throws -> String { try SyncScalarDecoding.string(value, at: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try SyncScalarDecoding.double(value, at: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try SyncScalarDecoding.float(value, at: codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: Int128.Type) throws -> Int128 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try integer(type) }

    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try decoder.decodeNested(type, from: value, at: codingPath)
    }

    private func integer<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> Integer {
        try SyncScalarDecoding.integer(type, value, at: codingPath)
    }
}
