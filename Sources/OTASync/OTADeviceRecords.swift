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
/// What the application writes is stamped with ``localNode`` and recorded in
/// the device's journal (``SyncCore/SyncJournal``) in the same transaction —
/// the journal is what a sync sends; what a sync applies is stamped with
/// ``syncNode``.
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

    /// Adds a record (a new LUID) or replaces the fields of `luid`, with its
    /// journal entry in the same transaction (see ``SyncCore/SyncJournal``).
    /// - Returns: the record's LUID.
    /// - Throws: ``SyncCore/StoreError`` (``SyncCore/StoreError/Code/storageFull`` when the store
    ///   has no room: then neither the record nor its entry is written).
    @discardableResult
    public func save(dataclass: String, luid: String? = nil, entity: String, fields: [String: SyncValue]) async throws -> String {
        try await save(dataclass: dataclass, [(luid, entity, fields)])[0]
    }

    /// Adds or replaces many records of a dataclass in one transaction — all of them or, when the
    /// store fails, none — each journaled as ``save(dataclass:luid:entity:fields:)`` does: an import's path.
    /// - Parameters:
    ///   - dataclass: The dataclass.
    ///   - records: Each record's LUID (a new one when `nil`), entity and fields.
    /// - Returns: The records' LUIDs, in the order given.
    /// - Throws: ``SyncCore/StoreError``, as ``save(dataclass:luid:entity:fields:)``.
    @discardableResult
    public func save(
        dataclass: String, _ records: [(luid: String?, entity: String, fields: [String: SyncValue])]
    ) async throws -> [String] {
        let luids = records.map { $0.luid ?? Self.newLUID() }
        let journal = OTADeviceJournal(dataclass: dataclass, now: clock.now(), keepsSynced: false)
        try await store.transaction(for: account) { tx in
            try await tx.prefetch(luids.map(journal.key))
            try await tx.journal.prefetch(luids.map(journal.key))
            var ids = OTAIDMap.device(dataclass: dataclass)
            try await ids.load(luids: records.compactMap(\.luid), in: tx)  // what each change reads, at once
            for (luid, (_, entity, fields)) in zip(luids, records) {
                let current = try await tx.record(journal.key(luid))?.record
                let action: JournalAction = current.map { $0.isDeleted ? .add : .modify } ?? .add
                try await journal.recordLocalChange(
                    action, current.flatMap { $0.isDeleted ? nil : $0 }, luid: luid, entity: entity, fields: fields, in: tx)
            }
        }
        return luids
    }

    /// Deletes a record, with its journal entry in the same transaction; the
    /// next sync deletes it on the server too.
    /// - Throws: ``SyncCore/StoreError``, as ``save(dataclass:luid:entity:fields:)``.
    public func delete(dataclass: String, luid: String) async throws {
        let journal = OTADeviceJournal(dataclass: dataclass, now: clock.now(), keepsSynced: false)
        try await store.transaction(for: account) { tx in
            guard let stored = try await tx.record(journal.key(luid)), !stored.record.isDeleted else { return }
            try await journal.recordLocalChange(
                .delete, stored.record, luid: luid, entity: OTADeviceJournal.entity(of: stored.record), fields: nil, in: tx)
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

    static func newLUID() -> String { "L" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased() }
}

/// What the device keeps about each dataclass between syncs, in its store's
/// metadata for the server peer.
enum OTAClientState {
    static let peer = PeerID("ota-server")

    /// Whether a collection of the device's store can be a dataclass: not the journal's, nor FLD's copies.
    static func isDataclass(_ name: String) -> Bool {
        name != SyncJournal.collection.rawValue && !name.hasPrefix("ota-synced:")
    }

    /// The last server anchor processed (a checkpoint or a commit).
    static func serverAnchor(_ dataclass: String) -> MetadataKey<String> { .init("ota.anchor.\(dataclass)", peer: peer) }

    /// The mode the server asked for the next sync; none for fast.
    static func requestedMode(_ dataclass: String) -> MetadataKey<OTASyncMode> { .init("ota.mode.\(dataclass)", peer: peer) }

    /// The device's anchors: a generation made on the first sync and the number of completed syncs.
    static func deviceAnchor(_ dataclass: String) -> MetadataKey<OTAClientDeviceAnchor> {
        .init("ota.device-anchor.\(dataclass)", peer: peer)
    }

    /// Before the journal: the change position up to which the device's own changes reached the server's
    /// mingle. A store that has it gets journal entries for its changes after it once (``OTAClientOutgoing``).
    static func legacySentPosition(_ dataclass: String) -> MetadataKey<ChangePosition> { .init("ota.sent.\(dataclass)", peer: peer) }

    /// Id mappings (server UUID → LUID) not yet delivered to the server; removed when there are none.
    static func pendingIDMap(_ dataclass: String) -> MetadataKey<[String: SyncValue]> {
        .init("ota.pending-idmap.\(dataclass)", peer: peer)
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
