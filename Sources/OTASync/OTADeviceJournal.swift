import Foundation
import SyncCore

/// How the device's OTA records map onto the journal (``SyncCore/SyncJournal``):
/// an entry's key is the record's store key (the dataclass and the LUID), its
/// records carry the application's fields, and a server version's token is
/// the server anchor at which the device had it.
///
/// The device's writes go through here: the application's (``recordLocalChange(_:_:luid:entity:fields:in:)``),
/// the server's versions that meet a pending entry (``judge(_:remote:entity:policy:in:)``),
/// and the answers to conflicts (``carryOut(_:_:entity:in:)``).
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

    /// Judges `remote`, the server's version of an item with the pending `entry`: the local data
    /// stays unless the policy's answer (or, for a `conflict` item, the application's) says otherwise.
    /// - Parameters:
    ///   - askUser: the server sent the item as a conflict for the user (its policy deferred).
    func judge(
        _ entry: JournalEntry, remote: ServerVersion, entity: String, policy: any ConflictPolicy, askUser: Bool,
        in tx: any StoreTransaction
    ) async throws -> Judgement {
        var answer: ConflictAnswer?
        if askUser {
            answer = nil
        } else {
            switch entry.classify(remote) {
            case .unchanged:
                return .agreed
            case .sameAsLocal:
                try await tx.journal.remove(entry.key)
                if keepsSynced { try await setSynced(remote.record, entity: entity, entry.key, in: tx) }
                return .agreed
            case .conflict:
                let resolution = await policy.resolve(
                    Conflict(local: entry.local, remote: remote.record, base: entry.archCopy?.record, resolvingSide: .client))
                answer = ConflictAnswer(resolution, localIsDeleted: entry.local.isDeleted)
            }
        }
        try await tx.journal.openConflict(entry.key, remote: remote)
        if let answer {
            var open = entry
            open.remote = remote
            try await carryOut(open, answer, entity: entity, in: tx)
        }
        return .conflict(answer: answer)
    }

    // MARK: Answers

    /// Carries out `answer` to the open conflict of `entry` (whose ``SyncCore/JournalEntry/remote`` is set).
    func carryOut(_ entry: JournalEntry, _ answer: ConflictAnswer, entity: String, in tx: any StoreTransaction) async throws {
        guard let remote = entry.remote else { return }
        let luid = entry.key.id.rawValue
        switch answer {
        case .keepMine:
            try await tx.journal.rebase(entry.key)
            if keepsSynced { try await setSynced(remote.record, entity: entity, entry.key, in: tx) }
        case .takeTheirs:
            try await takeTheirs(remote, luid: luid, entity: entity, in: tx)
            try await tx.journal.remove(entry.key)
        case .keepBoth:
            try await takeTheirs(remote, luid: luid, entity: entity, in: tx)
            try await tx.journal.remove(entry.key)
            if !entry.local.isDeleted {
                try await recordLocalChange(
                    .add, nil, luid: OTADeviceRecords.newLUID(), entity: entity, fields: entry.local.fields, in: tx)
            }
        case .merged(let fields):
            try await tx.journal.rebase(entry.key)
            if keepsSynced { try await setSynced(remote.record, entity: entity, entry.key, in: tx) }
            try await recordLocalChange(.modify, nil, luid: luid, entity: entity, fields: fields, in: tx)
        }
    }

    /// Writes the server's version as the sync's own write (not a local change).
    private func takeTheirs(_ remote: ServerVersion, luid: String, entity: String, in tx: any StoreTransaction) async throws {
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

    private func setSynced(_ record: SyncRecord, entity: String, _ key: RecordKey, in tx: any StoreTransaction) async throws {
        try await OTAClientState.setSynced(
            record.isDeleted ? nil : OTARecord(entity: entity, fields: record.fields), key.id.rawValue, dataclass, in: tx)
    }

    /// Carries out every answered conflict of the dataclass (a sync does it first), in one transaction.
    func carryOutAnswers(in store: AccountStore) async throws {
        let collection = collection
        _ = try await store.store.carryOutAnswers(for: store.account) { $0.key.collection == collection } with: { entry, answer, tx in
            let entity = Self.entity(of: try await tx.record(entry.key)?.record)
            try await carryOut(entry, answer, entity: entity, in: tx)
            return true
        }
    }
}
