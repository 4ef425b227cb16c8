/// An identifier that is a name: a string with a type of its own, so that one kind of id cannot be
/// passed where another is expected. Ids order, print and encode as their names.
public protocol StringIdentifier: RawRepresentable, Hashable, Comparable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible where RawValue == String
{
    /// Makes an id from its name.
    init(rawValue: String)
}

extension StringIdentifier {
    /// Makes an id from its name.
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    /// Makes an id from a literal.
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    /// The id's name.
    public var description: String { rawValue }
    /// Orders ids by name.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The account that owns a set of records: every store read and write is scoped to one.
///
/// Servers take it from the authenticated request, never from the message
/// body, so one user cannot reach another's data by naming it.
public struct AccountID: StringIdentifier {
    /// The account's name.
    public var rawValue: String
    /// Makes an account id from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// The collection (entity, type, dataclass) a record belongs to, such as `"contacts"`.
public struct CollectionID: StringIdentifier {
    /// The collection's name.
    public var rawValue: String
    /// Makes a collection id from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// The id of a record within its collection: a UUID string in every built-in stack.
public struct RecordID: StringIdentifier {
    /// The record's id.
    public var rawValue: String
    /// Makes a record id.
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// A node taking part in sync — a device, a client installation or a server —
/// under which a store keeps small metadata (anchors, counters, id maps).
public struct PeerID: StringIdentifier {
    /// The peer's name.
    public var rawValue: String
    /// Makes a peer id.
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// A position in a store's change sequence.
///
/// Every committed write gets a position greater than every position a reader
/// has seen before; ``SyncStore/changes(for:after:in:limit:)`` returns the
/// records written after a position, in order. appSync's counters, Aquasync's
/// UST and OTA's anchors are all positions.
public struct ChangePosition: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The position as a number; `0` is before every write.
    public var rawValue: UInt64
    /// Makes a position.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Makes a position.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    /// The position before every write.
    public static let start = ChangePosition(0)
    /// The position as a decimal number.
    public var description: String { String(rawValue) }
    /// Orders positions.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
