import Foundation
import SyncCore

/// How the device's OTA records map onto the journal (``SyncCore/SyncJournal``):
/// an entry's key is the record's store key (the dataclass and the LUID), its
/// records carry the application's fields, and a server version's token is
/// the server anchor at which the device had it.
///
/// The device's writes go through here: the application's (``recordLocalChange(_:_:luid:entity:fields:in:)``),
/// the server's versions that meet a pending entry (``judge(_:remote:entity:policy:in:)``),
/// and the answers to conflicts (``carryOutAnswers(in:)``).
struct OTADeviceJournal {
    let dataclass: String
    /// Stamps the device's local writes.
    let now: Date
    /// FLD: whether the device keeps a copy of what the server holds.
    let keepsSynced: Bool

    var collection: CollectionID { CollectionID(dataclass) }

    func key(_ luid: String) -> RecordKey { RecordKey(collection: collection, id: RecordID(luid)) }

    /// The record in the journal's neutral form: the application's fields, or a tombstone.
    static func neutral(_ stored: SyncRecord) throws -> SyncRecord {
        var record = stored
        record.fields = stored.isDeleted ? [:] : try OTARecord(stored).fields
        return record
    }

    /// The entity a stored record (or tombstone) names; `record` when none.
    static func entity(of stored: SyncRecord?) -> String { stored?.fields["entity"]?.stringValue ?? "record" }

    /// A version of `luid` holding `fields` (a tombstone for nil), written at `time` by `node`.
    func record(_ luid: String, fields: [String: SyncValue]?, time: Date, node: PeerID) -> SyncRecord {
        SyncRecord(
            collection: collection, id: RecordID(luid), fields: fields ?? [:], isDeleted: fields == nil,
            version: RecordVersion(modifiedAt: time, node: node))
    }

    // MARK: Local changes

    /// Writes the application's change of `luid` (nil `fields`: a delete) and its journal entry, in `tx`.
    func recordLocalChange(
        _ action: JournalAction, _ current: SyncRecord?, luid: String, entity: String, fields: [String: SyncValue]?,
        in tx: any StoreTransaction
    ) async throws {
        var held: ServerVersion?
        if let current {
            // A record the server knows is based on what it holds; a new one on nothing.
            var ids = OTAIDMap.device(dataclass: dataclass)
            try await ids.load(luids: [luid], in: tx)
            if ids.uuid(forLUID: luid) != nil {
                let anchor = try await tx.metadata(OTAClientState.serverAnchor(dataclass))
                held = ServerVersion(record: try Self.neutral(current), token: anchor.map(SyncValue.string))
            }
        }
        let local = record(luid, fields: fields, time: now, node: OTADeviceRecords.localNode)
        // A tombstone keeps the entity, for an answer that brings the record back.
        let stored = fields.map { OTARecord(entity: entity, fields: $0).storedFields } ?? ["entity": .string(entity)]
        try await tx.put(
            SyncRecord(collection: collection, id: local.id, fields: stored, isDeleted: fields == nil, version: local.version))
        try await tx.journal.recordLocalChange(action, local: local, at: now, basedOn: held)
    }

    // MARK: The server's versions

    /// How a server version that met a pending entry was taken.
    enum Judgement {
        /// No conflict: the server still holds the ArchCopy, or already holds the local version.
        case agreed
        /// A conflict the policy decided (and that was carried out), or left open for the application.
        case conflict(answer: ConflictAnswer?)
    }

    /// Judges `remote`, the server's version of an item with the pending `entry`, by the journal's rules
    /// (``SyncCore/SyncJournal/take(_:pending:policy:writer:)``): the local data stays unless the policy's
    /// answer (or, for a `conflict` item, the application's) says otherwise.
    /// - Parameters:
    ///   - askUser: the server sent the item as a conflict for the user (its policy deferred).
    func judge(
        _ entry: JournalEntry, remote: ServerVersion, entity: String, policy: any ConflictPolicy, askUser: Bool,
        in tx: any StoreTransaction
    ) async throws -> Judgement {
        let writer = ConflictWriting(journal: self, entity: entity)
        switch try await tx.journal.take(remote, pending: entry, policy: askUser ? AskUserPolicy() : policy, writer: writer) {
        case .unchanged, .agreed: return .agreed
        case .decided(let answer, _): return .conflict(answer: answer)
        case .opened, .stillOpen: return .conflict(answer: nil)
        }
    }

    // MARK: Answers

    /// How the device writes a conflict's decision: the server's version as the sync's own write, and
    /// — under FLD — the copy of what the server holds.
    struct ConflictWriting: ConflictWriter {
        let journal: OTADeviceJournal
        let entity: String

        func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
            try await journal.takeTheirs(remote, luid: entry.key.id.rawValue, entity: entity, in: tx)
        }

        func writeAgreement(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
            if journal.keepsSynced { try await journal.setSynced(remote.record, entity: entity, entry.key, in: tx) }
        }

        /// The local record stays as it is (*mine*) or takes the merged fields (*merged*).
        func writeLocalVersion(
            _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
        ) async throws {
            if journal.keepsSynced { try await journal.setSynced(remote.record, entity: entity, version.key, in: tx) }
            if merged {
                try await journal.recordLocalChange(
                    .modify, nil, luid: version.id.rawValue, entity: entity, fields: version.fields, in: tx)
            }
        }

        func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
            try await journal.recordLocalChange(.add, nil, luid: OTADeviceRecords.newLUID(), entity: entity, fields: local.fields, in: tx)
        }
    }

    /// Writes the server's version as the sync's own write (not a local change).
    func takeTheirs(_ remote: ServerVersion, luid: String, entity: String, in tx: any StoreTransaction) async throws {
        let version = RecordVersion(modifiedAt: now, node: OTADeviceRecords.syncNode)
        if remote.record.isDeleted {
            var ids = OTAIDMap.device(dataclass: dataclass)
            try await ids.remove(luid: luid, in: tx)
            if let stored = try await tx.record(key(luid)), !stored.record.isDeleted {
                try await tx.put(stored.record.tombstone(version: version))
            }
        } else {
            try await tx.put(
                SyncRecord(
                    collection: collection, id: RecordID(luid), fields: OTARecord(entity: entity, fields: remote.record.fields).storedFields,
                    isDeleted: false, version: version))
        }
        if keepsSynced { try await setSynced(remote.record, entity: entity, key(luid), in: tx) }
    }

    func setSynced(_ record: SyncRecord, entity: String, _ key: RecordKey, in tx: any StoreTransaction) async throws {
        try await OTAClientState.setSynced(
            record.isDeleted ? nil : OTARecord(entity: entity, fields: record.fields), key.id.rawValue, dataclass, in: tx)
    }

    /// Carries out every answered conflict of the dataclass (a sync does it first), in one transaction.
    func carryOutAnswers(in store: AccountStore) async throws {
        let collection = collection
        _ = try await store.store.carryOutAnswers(for: store.account) { $0.key.collection == collection } with: { entry, answer, tx in
            let entity = Self.entity(of: try await tx.record(entry.key)?.record)
            return try await tx.journal.carryOut(answer, of: entry, writer: ConflictWriting(journal: self, entity: entity))
        }
    }
}
