import Foundation
public import SyncCore

/// A device's records of the OTA dataclasses, in its own ``SyncStore``, under
/// its own ids (LUIDs). The application edits them here; ``OTAClient`` syncs
/// them.
///
/// ```swift
/// let records = OTADeviceRecords(store: SQLiteStore(path: "device.sqlite"), account: "ana")
/// let luid = try await records.save(dataclass: "com.apple.Contacts", entity: "com.apple.contacts.Contact",
///                                   fields: ["first name": "Ana"])
/// try await records.delete(dataclass: "com.apple.Contacts", luid: luid)
/// ```
///
/// What the application writes is stamped with ``localNode``; what a sync
/// applies, with ``syncNode`` — that is how a sync tells the device's own
/// changes from the server's.
public struct OTADeviceRecords: Sendable {
    /// The device's store.
    public let store: any SyncStore
    /// The account the records belong to.
    public let account: AccountID
    /// Stamps the application's writes.
    public let clock: any WallClock

    /// The version node of the application's writes.
    public static let localNode = PeerID("device")
    /// The version node of the writes a sync applies.
    public static let syncNode = PeerID("ota-sync")

    /// Makes the records of `account` in `store`.
    public init(store: any SyncStore, account: AccountID, clock: any WallClock = SystemWallClock()) {
        self.store = store
        self.account = account
        self.clock = clock
    }

    /// Adds a record (a new LUID) or replaces the fields of `luid`.
    /// - Returns: the record's LUID.
    @discardableResult
    public func save(dataclass: String, luid: String? = nil, entity: String, fields: [String: SyncValue]) async throws -> String {
        let luid = luid ?? Self.newLUID()
        let record = SyncRecord(
            collection: CollectionID(dataclass), id: RecordID(luid), fields: OTARecord(entity: entity, fields: fields).storedFields,
            isDeleted: false, version: RecordVersion(modifiedAt: clock.now(), node: Self.localNode))
        try await store.transaction(for: account) { tx in try await tx.put(record) }
        return luid
    }

    /// Deletes a record; the next sync deletes it on the server too.
    public func delete(dataclass: String, luid: String) async throws {
        let version = RecordVersion(modifiedAt: clock.now(), node: Self.localNode)
        try await store.transaction(for: account) { tx in
            guard let stored = try await tx.record(RecordKey(collection: CollectionID(dataclass), id: RecordID(luid))),
                !stored.record.isDeleted
            else { return }
            try await tx.put(stored.record.tombstone(version: version))
        }
    }

    /// The live records of a dataclass by LUID.
    public func records(dataclass: String) async throws -> [String: OTARecord] {
        try await store.transaction(for: account) { tx in
            var records: [String: OTARecord] = [:]
            for try await stored in tx.allRecords(in: CollectionID(dataclass)) where !stored.record.isDeleted {
                records[stored.record.id.rawValue] = try OTARecord(stored.record)
            }
            return records
        }
    }

    /// The conflicts the server sent for the user to resolve: by LUID, the device's version that lost.
    /// The record itself now holds the server's version.
    public func conflicts(dataclass: String) async throws -> [String: [String: SyncValue]] {
        try await store.transaction(for: account) { tx in
            try await tx.metadata(OTAClientState.conflicts(dataclass)) ?? [:]
        }
    }

    /// Resolves a conflict: keeping the device's version writes it again (it
    /// goes to the server with the next sync); keeping the server's just
    /// forgets the device's.
    public func resolveConflict(dataclass: String, luid: String, keepDevice: Bool) async throws {
        let version = RecordVersion(modifiedAt: clock.now(), node: Self.localNode)
        try await store.transaction(for: account) { tx in
            var conflicts = try await tx.metadata(OTAClientState.conflicts(dataclass)) ?? [:]
            guard let deviceFields = conflicts.removeValue(forKey: luid) else { return }
            try await tx.setMetadata(conflicts.isEmpty ? nil : conflicts, OTAClientState.conflicts(dataclass))
            guard keepDevice else { return }
            let key = RecordKey(collection: CollectionID(dataclass), id: RecordID(luid))
            let entity = try await tx.record(key).map { try OTARecord($0.record).entity } ?? "record"
            try await tx.put(
                SyncRecord(
                    collection: key.collection, id: key.id, fields: OTARecord(entity: entity, fields: deviceFields).storedFields,
                    isDeleted: false, version: version))
        }
    }

    static func newLUID() -> String { "L" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased() }
}

/// What the device keeps about each dataclass between syncs, in its store's
/// metadata for the server peer.
enum OTAClientState {
    static let peer = PeerID("ota-server")

    /// The last server anchor processed (a checkpoint or a commit).
    static func serverAnchor(_ dataclass: String) -> MetadataKey<String> { .init("ota.anchor.\(dataclass)", peer: peer) }

    /// The mode the server asked for the next sync; none for fast.
    static func requestedMode(_ dataclass: String) -> MetadataKey<OTASyncMode> { .init("ota.mode.\(dataclass)", peer: peer) }

    /// The device's anchors: a generation made on the first sync and the number of completed syncs.
    static func deviceAnchor(_ dataclass: String) -> MetadataKey<OTAClientDeviceAnchor> {
        .init("ota.device-anchor.\(dataclass)", peer: peer)
    }

    /// The change position up to which the device's own changes reached the server's mingle.
    static func sentPosition(_ dataclass: String) -> MetadataKey<ChangePosition> { .init("ota.sent.\(dataclass)", peer: peer) }

    /// The device's ids the server knows, with the server's id where the device learned it (else "").
    static func ids(_ dataclass: String) -> MetadataKey<[String: String]> { .init("ota.ids.\(dataclass)", peer: peer) }

    /// Id mappings (server UUID → LUID) not yet delivered to the server; removed when there are none.
    static func pendingIDMap(_ dataclass: String) -> MetadataKey<[String: SyncValue]> {
        .init("ota.pending-idmap.\(dataclass)", peer: peer)
    }

    /// The conflicts the server sent for the user to resolve, by LUID: the device's version that lost;
    /// removed when there are none.
    static func conflicts(_ dataclass: String) -> MetadataKey<[String: [String: SyncValue]]> {
        .init("ota.conflicts.\(dataclass)", peer: peer)
    }

    /// Where FLD keeps what the server holds of each record (by LUID).
    static func syncedCollection(_ dataclass: String) -> CollectionID { CollectionID("ota-synced:\(dataclass)") }

    /// What the server holds of a record, as the device last learned it (FLD only).
    static func synced(_ luid: String, _ dataclass: String, in tx: any StoreTransaction) async throws -> OTARecord? {
        guard let stored = try await tx.record(RecordKey(collection: syncedCollection(dataclass), id: RecordID(luid))),
            !stored.record.isDeleted
        else { return nil }
        return try OTARecord(stored.record)
    }

    /// Remembers what the server holds of a record (nil: nothing).
    static func setSynced(_ record: OTARecord?, _ luid: String, _ dataclass: String, in tx: any StoreTransaction) async throws {
        let key = RecordKey(collection: syncedCollection(dataclass), id: RecordID(luid))
        guard let record else {
            if try await tx.record(key) != nil { try await tx.purge(key) }
            return
        }
        try await tx.put(
            SyncRecord(
                collection: key.collection, id: key.id, fields: record.storedFields, isDeleted: false,
                version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 0), node: OTADeviceRecords.syncNode)))
    }
}

/// The device's anchor of a dataclass: the generation made on its first sync
/// and how many syncs completed, stored as `{generation, count}`.
struct OTAClientDeviceAnchor: Codable, Hashable, Sendable {
    var generation: String
    var count: Int

    /// A new generation, before any sync.
    static func fresh() -> Self { Self(generation: "d" + UUID().uuidString.prefix(8).lowercased(), count: 0) }
}
