import SyncCore

/// How appSync keeps objects in a ``SyncStore``: collection `appsync/<type>`,
/// record id = guid, fields = the object's wire form (plus, on a client, its
/// `counter_lastupdate`), and a unique index of live primary keys in metadata.
enum StoredObject {
    static func collection(_ type: String) -> CollectionID { CollectionID("appsync/" + type) }

    static func key(_ type: String, _ guid: String) -> RecordKey {
        RecordKey(collection: collection(type), id: RecordID(guid))
    }

    /// The record storing `object`, with `counter` as its `counter_lastupdate` when given (clients only).
    static func record(_ object: AppSyncObject, type: String, counter: Int64? = nil) -> SyncRecord {
        var fields = object.value.dictionaryValue ?? [:]
        if let counter { fields["counter_lastupdate"] = .integer(counter) }
        return SyncRecord(
            collection: collection(type), id: RecordID(object.guid), fields: fields, isDeleted: object.isDeleted,
            version: RecordVersion(modifiedAt: object.timestampLastUpdate, node: "appsync"))
    }

    /// The object a record stores and its `counter_lastupdate` (0 when none).
    static func object(_ record: SyncRecord) throws -> (object: AppSyncObject, counter: Int64) {
        do {
            let object = try AppSyncObject(.dictionary(record.fields), at: record.key.description)
            return (object, record.fields["counter_lastupdate"]?.integerValue ?? 0)
        } catch {
            throw StoreError(.corrupt, "\(record.key) is not an appSync object: \(error)")
        }
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
        _ object: AppSyncObject, replacing previous: AppSyncObject?, type: AppSyncObjectType, counter: Int64? = nil,
        in tx: any StoreTransaction
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
        try await tx.put(record(object, type: type.name, counter: counter))
    }
}
