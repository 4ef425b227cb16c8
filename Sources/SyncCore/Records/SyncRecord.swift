#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One record of an account: its identity, its fields, a deleted flag and the
/// metadata that conflict policies compare.
///
/// A deleted record is kept as a *tombstone* (``isDeleted`` set, fields
/// usually empty) so that the deletion travels through the change sequence
/// like any other write.
///
/// ```swift
/// let ada = SyncRecord(
///     collection: "contacts", id: "5f0c…",
///     fields: ["name": "Ada Lovelace"],
///     version: RecordVersion(modifiedAt: clock.now, node: "phone-1"))
/// ```
public struct SyncRecord: Sendable, Hashable {
    /// The collection the record belongs to.
    public var collection: CollectionID
    /// The record's id within its collection.
    public var id: RecordID
    /// The record's fields.
    public var fields: [String: SyncValue]
    /// Whether the record was deleted (a tombstone).
    public var isDeleted: Bool
    /// When and where the record was last changed.
    public var version: RecordVersion

    /// Makes a record.
    public init(
        collection: CollectionID,
        id: RecordID,
        fields: [String: SyncValue] = [:],
        isDeleted: Bool = false,
        version: RecordVersion
    ) {
        self.collection = collection
        self.id = id
        self.fields = fields
        self.isDeleted = isDeleted
        self.version = version
    }

    /// The record's address: collection and id.
    public var key: RecordKey { RecordKey(collection: collection, id: id) }

    /// A tombstone for this record: deleted, without fields, with `version`.
    public func tombstone(version: RecordVersion) -> SyncRecord {
        SyncRecord(collection: collection, id: id, fields: [:], isDeleted: true, version: version)
    }
}

/// The address of a record: its collection and its id.
public struct RecordKey: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The collection.
    public var collection: CollectionID
    /// The id within the collection.
    public var id: RecordID
    /// Makes a record key.
    public init(collection: CollectionID, id: RecordID) {
        self.collection = collection
        self.id = id
    }
    /// `collection/id`.
    public var description: String { "\(collection)/\(id)" }
    /// Orders by collection, then id.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.collection, lhs.id) < (rhs.collection, rhs.id)
    }
}

/// When and where a record was last changed.
///
/// Versions are ordered by time, then by node name, so that "newest wins"
/// gives the same answer on every node even when two clocks agree.
public struct RecordVersion: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The time of the change, from the writer's clock.
    public var modifiedAt: Date
    /// The node that made the change.
    public var node: PeerID

    /// Makes a version.
    public init(modifiedAt: Date, node: PeerID) {
        self.modifiedAt = modifiedAt
        self.node = node
    }

    /// `time@node`.
    public var description: String { "\(modifiedAt.timeIntervalSince1970)@\(node)" }

    /// Orders by time, then by node name.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.modifiedAt != rhs.modifiedAt { return lhs.modifiedAt < rhs.modifiedAt }
        return lhs.node < rhs.node
    }
}

/// A record as a store holds it: the record and the position of its last write.
public struct StoredRecord: Sendable, Hashable {
    /// The record.
    public var record: SyncRecord
    /// The position in the change sequence of the write that produced this version.
    public var position: ChangePosition

    /// Makes a stored record.
    public init(record: SyncRecord, position: ChangePosition) {
        self.record = record
        self.position = position
    }
}
