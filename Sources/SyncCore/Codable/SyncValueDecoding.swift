#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Decoder` behind ``SyncValueDecoder``.
///
/// One instance decodes a whole tree: a nested value is decoded by saving the
/// current value and coding path, decoding, and restoring them. Containers
/// keep their own entries, so a container made earlier stays valid.
final class SyncValueDecoding: Decoder {
    private let options: [CodingUserInfoKey: any Sendable]
    var codingPath: [any CodingKey]
    private(set) var value: SyncValue

    init(value: SyncValue, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.codingPath = codingPath
        self.options = userInfo
    }

    var userInfo: [CodingUserInfoKey: Any] { options }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let entries) = value else {
            throw SyncDecodingErrors.mismatch([String: SyncValue].self, expected: "a dictionary", found: value, at: codingPath)
        }
        return KeyedDecodingContainer(SyncKeyedDecodingContainer<Key>(decoder: self, entries: entries, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try SyncUnkeyedDecodingContainer(decoder: self, elements: Self.elements(of: value, at: codingPath), codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SyncSingleValueDecodingContainer(decoder: self, value: value, codingPath: codingPath)
    }

    /// Decodes a `Value` from `value`, found at `path`.
    func decodeNested<Value: Decodable>(
        _ type: Value.Type, from value: SyncValue, at path: @autoclosure () -> [any CodingKey]
    ) throws -> Value {
        if let direct = try Self.directValue(type, from: value, at: path()) { return direct }
        let savedValue = self.value
        let savedPath = codingPath
        self.value = value
        codingPath = path()
        defer {
            self.value = savedValue
            codingPath = savedPath
        }
        return try Value(from: self)
    }

    /// A new decoder for `value`, for `superDecoder()`.
    func makeSuperDecoder(for value: SyncValue, at path: [any CodingKey]) -> SyncValueDecoding {
        SyncValueDecoding(value: value, codingPath: path, userInfo: options)
    }

    /// The elements of an array, or the bytes of data as integers (so a `[UInt8]` reads either).
    static func elements(of value: SyncValue, at path: [any CodingKey]) throws -> [SyncValue] {
        switch value {
        case .array(let elements): return elements
        case .data(let bytes): return bytes.map { .integer(Int64($0)) }
        default: throw SyncDecodingErrors.mismatch([SyncValue].self, expected: "an array", found: value, at: path)
        }
    }

    /// The value of a type decoded straight from a ``SyncValue`` case, else `nil`.
    ///
    /// Compares metatypes first, so the common case (a plain struct) costs a
    /// few pointer comparisons rather than dynamic casts.
    static func directValue<Value: Decodable>(
        _ type: Value.Type, from value: SyncValue, at path: @autoclosure () -> [any CodingKey]
    ) throws -> Value? {
        if Value.self == SyncValue.self { return value as? Value }
        if Value.self == Date.self { return try SyncScalarDecoding.date(value, at: path()) as? Value }
        if Value.self == Data.self { return try SyncScalarDecoding.data(value, at: path()) as? Value }
        if Value.self == URL.self { return try SyncScalarDecoding.url(value, at: path()) as? Value }
        if Value.self == UUID.self { return try SyncScalarDecoding.uuid(value, at: path()) as? Value }
        if Value.self == Decimal.self { return try SyncScalarDecoding.decimal(value, at: path()) as? Value }
        return nil
    }
}
