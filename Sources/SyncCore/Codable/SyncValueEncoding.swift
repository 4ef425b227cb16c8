#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Encoder` behind ``SyncValueEncoder``.
///
/// One instance encodes a whole tree: a nested value is encoded by saving the
/// current storage and coding path, encoding into a fresh storage, and
/// restoring them, so no encoder is allocated per nested value. Containers
/// write into reference nodes, which ``result`` turns into a ``SyncValue``.
final class SyncValueEncoding: Encoder {
    /// The settings of the ``SyncValueEncoder`` that started the encoding.
    struct Options {
        let nilEncodingStrategy: SyncValueEncoder.NilEncodingStrategy
        let userInfo: [CodingUserInfoKey: any Sendable]
    }

    /// What the value being encoded has written so far.
    enum Storage {
        case empty
        case single(SyncValue)
        case keyed(KeyedNode)
        case unkeyed(UnkeyedNode)
    }

    let options: Options
    var codingPath: [any CodingKey]
    var storage: Storage = .empty

    init(options: Options, codingPath: [any CodingKey]) {
        self.options = options
        self.codingPath = codingPath
    }

    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    /// The value written, or `nil` when nothing was.
    var result: SyncValue? {
        switch storage {
        case .empty: nil
        case .single(let value): value
        case .keyed(let node): node.finish()
        case .unkeyed(let node): node.finish()
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let node: KeyedNode
        if case .keyed(let existing) = storage {
            node = existing
        } else {
            node = KeyedNode()
            storage = .keyed(node)
        }
        return KeyedEncodingContainer(SyncKeyedEncodingContainer<Key>(encoder: self, node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let node: UnkeyedNode
        if case .unkeyed(let existing) = storage {
            node = existing
        } else {
            node = UnkeyedNode()
            storage = .unkeyed(node)
        }
        return SyncUnkeyedEncodingContainer(encoder: self, node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SyncSingleValueEncodingContainer(encoder: self)
    }

    /// Encodes `value` as the value at `path`.
    ///
    /// Types with a ``SyncValue`` case of their own (dates, data, URLs, UUIDs,
    /// decimals, `SyncValue` itself) map directly; everything else runs its
    /// `encode(to:)` against this encoder.
    ///
    /// - Returns: The encoded value, or `nil` when `encode(to:)` wrote nothing.
    func encodeNested<Value: Encodable>(_ value: Value, at path: [any CodingKey]?) throws -> SyncValue? {
        if let direct = Self.directValue(value) { return direct }
        let savedStorage = storage
        let savedPath = codingPath
        storage = .empty
        if let path { codingPath = path }
        defer {
            storage = savedStorage
            codingPath = savedPath
        }
        try value.encode(to: self)
        return result
    }

    /// A new encoder whose value lands at `path` when the tree is finished.
    func makeSuperEncoder(at path: [any CodingKey]) -> SyncValueEncoding {
        SyncValueEncoding(options: options, codingPath: path)
    }

    /// The value of a type that maps straight to a ``SyncValue`` case, else `nil`.
    ///
    /// Compares metatypes first, so the common case (a plain struct) costs a
    /// few pointer comparisons rather than dynamic casts.
    static func directValue<Value: Encodable>(_ value: Value) -> SyncValue? {
        if Value.self == SyncValue.self, let syncValue = value as? SyncValue { return syncValue }
        if Value.self == Date.self, let date = value as? Date { return .date(date) }
        if Value.self == Data.self, let data = value as? Data { return .data([UInt8](data)) }
        if Value.self == URL.self, let url = value as? URL { return .string(url.absoluteString) }
        if Value.self == UUID.self, let uuid = value as? UUID { return .string(uuid.uuidString.lowercased()) }
        if Value.self == Decimal.self, let decimal = value as? Decimal { return .string(decimal.description) }
        return nil
    }

    /// The canonical integer for a 128-bit value, or an error naming `path` when it does not fit 64 bits.
    static func integer<Wide: BinaryInteger>(_ value: Wide, at path: [any CodingKey]) throws -> SyncValue {
        if let signed = Int64(exactly: value) { return .integer(signed) }
        if let unsigned = UInt64(exactly: value) { return .unsignedInteger(unsigned) }
        throw EncodingError.invalidValue(
            value,
            EncodingError.Context(
                codingPath: path, debugDescription: "\(value) does not fit in 64 bits, the widest integer SyncValue carries"))
    }
}

/// A dictionary being built: finished values, plus nested containers and
/// super encoders that may still be written to until the tree is finished.
final class KeyedNode {
    private(set) var values: [String: SyncValue] = [:]
    private(set) var pending: [String: PendingValue] = [:]

    func set(_ value: SyncValue, for key: String) {
        values[key] = value
        if !pending.isEmpty { pending[key] = nil }
    }

    func setPending(_ value: PendingValue, for key: String) {
        pending[key] = value
        values[key] = nil
    }

    func finish() -> SyncValue {
        if pending.isEmpty { return .dictionary(values) }
        var all = values
        for (key, value) in pending { all[key] = value.finish() }
        return .dictionary(all)
    }
}

/// An array being built: finished values, plus the positions of nested
/// containers and super encoders that are finished with the tree.
final class UnkeyedNode {
    private(set) var values: [SyncValue] = []
    private var pending: [(index: Int, value: PendingValue)] = []

    var count: Int { values.count }

    func append(_ value: SyncValue) { values.append(value) }

    func appendPending(_ value: PendingValue) {
        pending.append((values.count, value))
        values.append(.null)
    }

    func finish() -> SyncValue {
        if pending.isEmpty { return .array(values) }
        var all = values
        for (index, value) in pending { all[index] = value.finish() }
        return .array(all)
    }
}

/// A part of the tree that is finished last.
enum PendingValue {
    case keyed(KeyedNode)
    case unkeyed(UnkeyedNode)
    case encoder(SyncValueEncoding)

    func finish() -> SyncValue {
        switch self {
        case .keyed(let node): node.finish()
        case .unkeyed(let node): node.finish()
        case .encoder(let encoder): encoder.result ?? .dictionary([:])
        }
    }
}
