import Foundation
import SyncCore

/// Applies one `sync-changes` command from the server to the device's
/// records in one transaction, with the checkpoint anchor it carries and the
/// id maps it creates, so the device never holds half a command.
struct OTADeviceApply: Sendable {
    let uri: String
    let mode: OTASyncMode
    /// Whether this is the first server command of a reset: the device's records go first.
    let dropsRecords: Bool
    let itemType: OTAItemType
    let items: [(id: String, item: OTAItem)]
    let anchor: String?
    /// When the device applies the changes.
    let now: Date
    /// FLD: whether to remember what the server holds of each record.
    let keepsSynced: Bool
    /// Decides a conflict with a pending local change.
    let policy: any ConflictPolicy

    struct Outcome {
        var count = 0
        var conflicts = 0
        /// The device ids of records with a pending change that a server version met.
        var judged: Set<String> = []
        /// Server ids → the new device ids made for them.
        var newIDs: [String: String] = [:]
    }

    init(
        uri: String, sync: ClientDataclass, command: OTACommand, now: Date, keepsSynced: Bool, policy: any ConflictPolicy
    ) throws(OTAMessageError) {
        self.uri = uri
        self.now = now
        self.keepsSynced = keepsSynced
        self.policy = policy
        mode = sync.mode
        dropsRecords = sync.mode == .reset && !sync.droppedForReset
        switch command.params["itemtype"] {
        case nil: itemType = .records
        case .string(let name)?:
            guard let known = OTAItemType(rawValue: name) else { throw .badValue("itemtype", "itemtype must be records or changes") }
            itemType = known
        default: throw .paramError("itemtype", "itemtype must be a string")
        }
        guard case .dictionary(let items)? = command.params["items"] else { throw .missingParam("items") }
        let itemType = itemType
        self.items = try items.sorted { $0.key < $1.key }.map { key, value throws(OTAMessageError) in
            (key, try OTAItem(value, key: key, itemType: itemType))
        }
        anchor = try command.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) }?.nextServerAnchor
    }

    func apply(in store: AccountStore) async throws -> Outcome {
        try await store.transaction { tx in
            var outcome = Outcome()
            let collection = CollectionID(uri)
            let journal = OTADeviceJournal(dataclass: uri, now: now, keepsSynced: keepsSynced)
            var ids = OTAIDMap.device(dataclass: uri)
            var pending = try await tx.metadata(OTAClientState.pendingIDMap(uri)) ?? [:]
            if dropsRecords {
                try await dropAll(collection, in: tx)
                try await dropAll(OTAClientState.syncedCollection(uri), in: tx)
                for entry in try await tx.journal.entries(in: [collection]) { try await tx.journal.remove(entry.key) }
                try await ids.removeAll(in: tx)
                pending = [:]
            }
            // An item's key is the device's LUID, or the server's UUID of a record the device may have mapped.
            try await ids.load(luids: items.map(\.id), uuids: items.map(\.id), in: tx)
            let version = RecordVersion(modifiedAt: now, node: OTADeviceRecords.syncNode)
            // Every record and journal entry the loop may look at, read at once.
            let candidates = items.flatMap { key, _ in [key] + (ids.luid(forUUID: key).map { [$0] } ?? []) }
            try await tx.prefetch(candidates.map { RecordKey(collection: collection, id: RecordID($0)) })
            try await tx.journal.prefetch(candidates.map(journal.key))

            for (key, item) in items {
                var luid: String? = ids.uuid(forLUID: key) != nil ? key : ids.luid(forUUID: key)
                if luid == nil, try await tx.record(RecordKey(collection: collection, id: RecordID(key))) != nil { luid = key }
                let current = try await luid.asyncMap { try await tx.record(RecordKey(collection: collection, id: RecordID($0))) } ?? nil
                if let luid, let entry = try await tx.journal.entry(for: journal.key(luid)) {
                    // A local change is pending: the journal judges the server's version; the local data stays unless
                    // the answer takes the server's.
                    let entity = item.entity ?? OTADeviceJournal.entity(of: current?.record)
                    let fields = item.operation == .delete ? nil : item.applied(to: entry.archCopy?.record.fields ?? entry.local.fields)
                    let remote = ServerVersion(
                        record: journal.record(luid, fields: fields, time: now, node: OTADeviceRecords.syncNode), token: anchor.map(SyncValue.string))
                    let judgement = try await journal.judge(
                        entry, remote: remote, entity: entity, policy: policy, askUser: item.conflict != nil, in: tx)
                    ids.forget(luid: luid)  // taking the server's delete removed it from the map
                    if case .conflict = judgement { outcome.conflicts += 1 }
                    outcome.judged.insert(luid)
                    outcome.count += 1
                    continue
                }
                outcome.count += 1
                switch item.operation {
                case .delete:
                    guard let luid, let current, !current.record.isDeleted else { continue }
                    try await tx.put(current.record.tombstone(version: version))
                    if keepsSynced { try await OTAClientState.setSynced(nil, luid, uri, in: tx) }
                    try await ids.remove(luid: luid, in: tx)
                case .add, .modify:
                    let id: String
                    if let luid {
                        id = luid
                    } else {
                        id = OTADeviceRecords.newLUID()
                        ids.assumeUnmapped(luid: id)
                        try await ids.set(luid: id, uuid: key, in: tx)
                        pending[key] = .string(id)
                        outcome.newIDs[key] = id
                    }
                    let existing = try current.flatMap { $0.record.isDeleted ? nil : try OTARecord($0.record) }
                    let record = OTARecord(
                        entity: item.entity ?? existing?.entity ?? "record", fields: item.applied(to: existing?.fields ?? [:]))
                    try await tx.put(
                        SyncRecord(
                            collection: collection, id: RecordID(id), fields: record.storedFields, isDeleted: false, version: version))
                    if keepsSynced { try await OTAClientState.setSynced(record, id, uri, in: tx) }
                }
            }
            try await tx.setMetadata(pending.isEmpty ? nil : pending, OTAClientState.pendingIDMap(uri))
            if let anchor { try await tx.setMetadata(anchor, OTAClientState.serverAnchor(uri)) }
            return outcome
        }
    }

    /// Reset: the device's records of the dataclass give way to the server's.
    private func dropAll(_ collection: CollectionID, in tx: any StoreTransaction) async throws {
        for try await stored in tx.allRecords(in: collection) { try await tx.purge(stored.record.key) }
    }
}
