#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One value of the shape every Anchorage codec carries.
///
/// `SyncValue` is the single value model between bytes and typed messages:
/// every ``SyncCodec`` decodes bytes into a `SyncValue` and encodes one back,
/// and stacks convert their typed messages to and from it with
/// ``SyncValueEncoder`` and ``SyncValueDecoder``. There is no `[String: Any]`
/// anywhere in Anchorage.
///
/// The cases are those of a property list, plus ``null`` for the formats that
/// have it (JSON, MessagePack). A codec that cannot carry a case (a plist and
/// `null`) rejects it with ``CodecError/Code/unsupportedValue``.
///
/// ```swift
/// let contact: SyncValue = [
///     "name": "Ada Lovelace",
///     "born": .date(Date(timeIntervalSince1970: -4_777_545_600)),
///     "emails": ["ada@example.org"],
/// ]
/// ```
///
/// ## Canonical integers
/// ``integer(_:)`` carries every value that fits `Int64`. ``unsignedInteger(_:)``
/// is only for values above `Int64.max`; decoders never produce it for a
/// smaller value, so two equal numbers always compare equal.
public enum SyncValue: Sendable, Hashable {
    /// The absence of a value (JSON `null`, MessagePack `nil`). Property lists cannot carry it.
    case null
    /// A Unicode string.
    case string(String)
    /// A signed 64-bit integer.
    case integer(Int64)
    /// An unsigned integer above `Int64.max` (binary plist, MessagePack and JSON carry these).
    case unsignedInteger(UInt64)
    /// A double-precision floating-point number.
    case real(Double)
    /// A Boolean.
    case bool(Bool)
    /// A point in time.
    case date(Date)
    /// Raw bytes.
    case data([UInt8])
    /// An ordered list of values.
    case array([SyncValue])
    /// A dictionary with string keys. Encoders write the keys in sorted order,
    /// so the same value always gives the same bytes.
    case dictionary([String: SyncValue])

    /// Makes the canonical integer value for any binary integer: ``integer(_:)``
    /// when it fits `Int64`, else ``unsignedInteger(_:)``.
    ///
    /// - Precondition: `value` fits in `UInt64` when it does not fit in `Int64`.
    public static func integer<T: BinaryInteger>(exactly value: T) -> SyncValue {
        if let signed = Int64(exactly: value) { return .integer(signed) }
        return .unsignedInteger(UInt64(value))
    }

    /// The kind of this value, for error messages and capability checks.
    public var kind: Kind {
        switch self {
        case .null: .null
        case .string: .string
        case .integer, .unsignedInteger: .integer
        case .real: .real
        case .bool: .bool
        case .date: .date
        case .data: .data
        case .array: .array
        case .dictionary: .dictionary
        }
    }

    /// The kinds of ``SyncValue``, without their payloads.
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// ``SyncValue/null``.
        case null
        /// ``SyncValue/string(_:)``.
        case string
        /// ``SyncValue/integer(_:)`` and ``SyncValue/unsignedInteger(_:)``.
        case integer
        /// ``SyncValue/real(_:)``.
        case real
        /// ``SyncValue/bool(_:)``.
        case bool
        /// ``SyncValue/date(_:)``.
        case date
        /// ``SyncValue/data(_:)``.
        case data
        /// ``SyncValue/array(_:)``.
        case array
        /// ``SyncValue/dictionary(_:)``.
        case dictionary

        /// The kind's name, as it appears in error messages.
        public var description: String { rawValue }
    }
}

// MARK: - Accessors

extension SyncValue {
    /// The string, if this is a ``string(_:)``.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an ``integer(_:)`` (or an unsigned one that fits `Int64`, which canonical values never are).
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): value
        case .unsignedInteger(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// The number as a `Double`, if this is a ``real(_:)`` or an integer.
    public var realValue: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        case .unsignedInteger(let value): Double(value)
        default: nil
        }
    }

    /// The Boolean, if this is a ``bool(_:)``.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The date, if this is a ``date(_:)``.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The bytes, if this is a ``data(_:)``.
    public var dataValue: [UInt8]? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an ``array(_:)``.
    public var arrayValue: [SyncValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The entries, if this is a ``dictionary(_:)``.
    public var dictionaryValue: [String: SyncValue]? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// Whether this is ``null``.
    public var isNull: Bool { self == .null }

    /// The value under `key` when this is a dictionary; `nil` otherwise.
    public subscript(key: String) -> SyncValue? {
        dictionaryValue?[key]
    }

    /// The deepest nesting of arrays and dictionaries in this value (a scalar has depth 0).
    public var depth: Int {
        switch self {
        case .array(let elements): 1 + (elements.lazy.map(\.depth).max() ?? 0)
        case .dictionary(let entries): 1 + (entries.values.lazy.map(\.depth).max() ?? 0)
        default: 0
        }
    }
}

// MARK: - Literals

extension SyncValue: ExpressibleByStringLiteral {
    /// Makes a ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension SyncValue: ExpressibleByIntegerLiteral {
    /// Makes an ``integer(_:)``.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension SyncValue: ExpressibleByFloatLiteral {
    /// Makes a ``real(_:)``.
    public init(floatLiteral value: Double) { self = .real(value) }
}

extension SyncValue: ExpressibleByBooleanLiteral {
    /// Makes a ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension SyncValue: ExpressibleByArrayLiteral {
    /// Makes an ``array(_:)``.
    public init(arrayLiteral elements: SyncValue...) { self = .array(elements) }
}

extension SyncValue: ExpressibleByDictionaryLiteral {
    /// Makes a ``dictionary(_:)``. A repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, SyncValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension SyncValue: ExpressibleByNilLiteral {
    /// Makes ``null``.
    public init(nilLiteral: ()) { self = .null }
}
