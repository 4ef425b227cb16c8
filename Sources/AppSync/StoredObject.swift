#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// How appSync keeps objects in a ``SyncStore``: collection `appsync/<type>`,
/// record id = guid, fields = the object's wire form, and a unique index of
/// live primary keys in metadata. On a client, the journal's neutral records
/// of an object hold the type's fields only (``neutral(_:type:node:)``).
enum StoredObject {
    /// The node of a client's own versions in the journal and in conflicts.
    static let clientNode: PeerID = "client"
    /// The node of the server's versions in the journal and in conflicts.
    static let serverNode: PeerID = "server"

    static func collection(_ type: String) -> CollectionID { CollectionID("appsync/" + type) }

    static func key(_ type: String, _ guid: String) -> RecordKey {
        RecordKey(collection: collection(type), id: RecordID(guid))
    }

    /// The record storing `object`.
    static func record(_ object: AppSyncObject, type: String) -> SyncRecord {
        SyncRecord(
            collection: collection(type), id: RecordID(object.guid), fields: object.value.dictionaryValue ?? [:],
            isDeleted: object.isDeleted, version: RecordVersion(modifiedAt: object.timestampLastUpdate, node: "appsync"))
    }

    /// The object a record stores (a `counter_lastupdate` that stores of
    /// earlier versions kept is dropped).
    static func object(_ record: SyncRecord) throws -> AppSyncObject {
        do {
            return try AppSyncObject(.dictionary(record.fields), at: record.key.description)
        } catch {
            throw StoreError(.corrupt, "\(record.key) is not an appSync object: \(error)")
        }
    }

    // MARK: Journal

    /// `object` as the journal and conflict policies see it: the type's
    /// fields, the soft-delete flag, and `timestamp_lastupdate` as the version time.
    static func neutral(_ object: AppSyncObject, type: String, node: PeerID) -> SyncRecord {
        SyncRecord(
            collection: collection(type), id: RecordID(object.guid), fields: object.fields, isDeleted: object.isDeleted,
            version: RecordVersion(modifiedAt: object.timestampLastUpdate, node: node))
    }

    /// `object` as the server's version, named by its `timestamp_lastupdate`.
    static func serverVersion(_ object: AppSyncObject, type: String) -> ServerVersion {
        ServerVersion(record: neutral(object, type: type, node: serverNode), token: .date(object.timestampLastUpdate))
    }

    /// The object a journal version holds; `created` is its `timestamp_created`,
    /// which the same guid keeps on every side.
    static func object(_ version: ServerVersion, created: Date) -> AppSyncObject {
        AppSyncObject(
            guid: version.record.id.rawValue, fields: version.record.fields, isDeleted: version.record.isDeleted,
            timestampCreated: created, timestampLastUpdate: version.record.version.modifiedAt)
    }

    // MARK: Primary-key index

    private static let indexPeer: PeerID = "appsync.primary-keys"

    private static func indexKey(_ type: String, _ primaryKey: String) -> String { type + "\u{1F}" + primaryKey }

    /// The guid of the live object of `type` holding `primaryKey`, if any.
    static func owner(of primaryKey: String, type: String, in tx: any StoreTransaction) async throws -> String? {
        try await tx.metadata(indexKey(type, primaryKey), for: indexPeer)?.stringValue
    }

    /// Writes `object` and keeps the primary-key index in step with it.
    static func put(
        _ object: AppSyncObject, replacing previous: AppSyncObject?, type: AppSyncObjectType, in tx: any StoreTransaction
    ) async throws {
        if let previous, !previous.isDeleted, let oldKey = type.primaryKeyValue(of: previous),
            object.isDeleted || type.primaryKeyValue(of: object) != oldKey,
            try await owner(of: oldKey, type: type.name, in: tx) == object.guid
        {
            try await tx.setMetadata(nil, indexKey(type.name, oldKey), for: indexPeer)
        }
        if !object.isDeleted, let newKey = type.primaryKeyValue(of: object) {
            try await tx.setMetadata(.string(object.guid), indexKey(type.name, newKey), for: indexPeer)
        }
        try await tx.put(record(object, type: type.name))
    }
}
