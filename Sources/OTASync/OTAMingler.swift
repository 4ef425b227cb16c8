import Foundation
import SyncCore

/// The server's mingle: applies the changes every dataclass of a session
/// pulled from the device, in one transaction, through the conflict policy,
/// and keeps the id maps and anchors' generations that go with them.
struct OTAMingler: Sendable {
    let syncs: [DataclassSync]
    let peer: PeerID
    /// The version node of this device's writes.
    let node: PeerID
    let policy: any ConflictPolicy
    /// The rule a device's record must pass to be stored.
    let validation: RecordValidation
    let now: Date

    /// The node of records the server merged itself.
    static let serverNode = PeerID("ota-server")

    func mingle(in tx: any StoreTransaction) async throws -> [DataclassSync] {
        var mingled: [DataclassSync] = []
        for sync in syncs { mingled.append(try await mingle(sync, in: tx)) }
        return mingled
    }

    private func mingle(_ sync: DataclassSync, in tx: any StoreTransaction) async throws -> DataclassSync {
        var sync = sync
        let uri = sync.uri
        var state = OTADeviceState(try await tx.metadata(OTADeviceState.key(uri), for: peer))
        var idMap = OTAIDMap.server(dataclass: uri, device: peer)
        // A device id may be a server id too (a device that uses the server's ids): both are read.
        try await idMap.load(luids: sync.items.map(\.id), uuids: sync.items.map(\.id), in: tx)
        var conflicts = try await tx.metadata(OTADeviceState.conflictsKey(uri), for: peer)?.dictionaryValue ?? [:]
        let filter = try await tx.metadata(OTADeviceState.filterKey(uri), for: peer)?.dictionaryValue.map {
            value throws(OTAMessageError) in try OTADataclassFilter(value)
        }
        var matcher: OTASlowSyncMatcher?
        switch sync.mode {
        case .fast:
            break
        case .slow:
            matcher = try await OTASlowSyncMatcher(previous: idMap, collection: CollectionID(uri), in: tx)
            try await idMap.removeAll(in: tx)
        case .reset:
            try await idMap.removeAll(in: tx)
        }
        if sync.mode == .fast {
            // Conflicts sent in a push the device has since confirmed (its anchor is past them) are delivered.
            for uuid in conflicts.keys {
                let stored = try await tx.record(RecordKey(collection: CollectionID(uri), id: RecordID(uuid)))
                if (stored?.position ?? .start) <= sync.anchorPosition { conflicts[uuid] = nil }
            }
        } else {
            // The caller names the new generation (`OTAServerSession.newGeneration(for:)`): the same in every
            // process that mingles this message.
            state.generation = sync.generation
            state.requestedMode = nil
            conflicts = [:]
        }
        let previous = OTAMingled(try await tx.metadata(OTADeviceState.mingledKey(uri), for: peer))
        let sentAgain = sync.mode == .fast && sync.nextDeviceAnchor != nil && previous.deviceAnchor == sync.nextDeviceAnchor
        var digests: [String: String] = [:]
        for (luid, item) in sync.items {
            let digest = try OTAMingled.digest(item)
            digests[luid] = digest
            if sentAgain, previous.digests[luid] == digest,
                try await !hasSeenAnotherVersion(luid, idMap: idMap, sync: sync, in: tx)
            {
                continue  // applied by the mingle of a cut session
            }
            let uuid: String?
            if var current = matcher {
                uuid = try await current.match(luid: luid, item: item, in: tx)
                matcher = current
            } else {
                uuid = try await knownID(luid, idMap: idMap, collection: CollectionID(uri), in: tx)
            }
            var item = item
            var writer = node
            if let container = filter?.defaultContainer, item.operation == .add, item.record?["container"] == nil,
                item.changes?["container"] == nil
            {
                if item.record != nil { item.record?["container"] = .string(container) } else { item.changes?["container"] = .string(container) }
                writer = Self.serverNode  // so that the device's copy gets the container too
            }
            if let reason = try await refusal(of: item, luid: luid, uuid: uuid, sync: sync, in: tx) {
                sync.refusals[luid] = reason
                digests[luid] = nil  // sent again after a cut, it is judged again
                continue
            }
            try await apply(
                item, luid: luid, uuid: uuid, writer: writer, sync: &sync, idMap: &idMap, conflicts: &conflicts, in: tx)
        }
        try await tx.setMetadata(
            OTAMingled(deviceAnchor: sync.nextDeviceAnchor, digests: digests).value, OTADeviceState.mingledKey(uri), for: peer)
        state.remember(deviceAnchor: sync.nextDeviceAnchor)
        try await tx.setMetadata(state.value, OTADeviceState.key(uri), for: peer)
        try await tx.setMetadata(conflicts.isEmpty ? nil : .dictionary(conflicts), OTADeviceState.conflictsKey(uri), for: peer)
        sync.generation = state.generation
        return sync
    }

    /// Whether the device already received a version of `luid` that another writer made (its anchor is
    /// past it): an item it sends again after that is its answer to that version, not a repeat.
    private func hasSeenAnotherVersion(_ luid: String, idMap: OTAIDMap, sync: DataclassSync, in tx: any StoreTransaction)
        async throws -> Bool
    {
        guard let uuid = try await knownID(luid, idMap: idMap, collection: CollectionID(sync.uri), in: tx),
            let stored = try await tx.record(RecordKey(collection: CollectionID(sync.uri), id: RecordID(uuid)))
        else { return false }
        return stored.record.version.node != node && stored.position <= sync.anchorPosition
    }

    /// The server id of a device id in fast sync: mapped, or the id itself for a device that uses the server's ids.
    private func knownID(_ luid: String, idMap: OTAIDMap, collection: CollectionID, in tx: any StoreTransaction)
        async throws -> String?
    {
        if let uuid = idMap.uuid(forLUID: luid) { return uuid }
        return try await tx.record(RecordKey(collection: collection, id: RecordID(luid))) != nil ? luid : nil
    }

    /// Why ``validation`` refuses the record `item` would store, or nil: the record's fields as they
    /// would be stored (without the entity), or a tombstone for a delete.
    private func refusal(of item: OTAItem, luid: String, uuid: String?, sync: DataclassSync, in tx: any StoreTransaction)
        async throws -> String?
    {
        let key = RecordKey(collection: CollectionID(sync.uri), id: RecordID(uuid ?? luid))
        let version = RecordVersion(modifiedAt: now, node: node)
        guard item.operation != .delete else {
            return validation.refusal(for: SyncRecord(collection: key.collection, id: key.id, fields: [:], isDeleted: true, version: version))
        }
        let current = try await uuid == nil ? nil : tx.record(key)
        let existing = try current.flatMap { $0.record.isDeleted ? nil : try OTARecord($0.record) }
        return validation.refusal(
            for: SyncRecord(
                collection: key.collection, id: key.id, fields: item.applied(to: existing?.fields ?? [:]), isDeleted: false,
                version: version))
    }

    private func apply(
        _ item: OTAItem, luid: String, uuid: String?, writer: PeerID, sync: inout DataclassSync, idMap: inout OTAIDMap,
        conflicts: inout [String: SyncValue], in tx: any StoreTransaction
    ) async throws {
        let collection = CollectionID(sync.uri)
        let current = try await uuid.asyncMap { try await tx.record(RecordKey(collection: collection, id: RecordID($0))) } ?? nil
        let live = current.flatMap { $0.record.isDeleted ? nil : $0 }
        let changedByOthers = live.map { sync.mode != .fast || ($0.position > sync.anchorPosition && $0.record.version.node != node) } ?? false
        let version = RecordVersion(modifiedAt: now, node: writer)

        guard item.operation != .delete else {
            guard let live, let uuid else { return }
            let tombstone = live.record.tombstone(version: version)
            if changedByOthers {
                switch await policy.resolve(Conflict(local: live.record, remote: tombstone, resolvingSide: .server)) {
                case .keepLocal, .deferred: try await tx.put(live.record)  // written again so it goes back to the device
                case .merged(let merged): try await tx.put(rekeyed(merged, collection, uuid, node: Self.serverNode))
                case .takeRemote, .keepBoth: try await tx.put(tombstone)
                }
            } else {
                try await tx.put(tombstone)
            }
            return
        }

        let existing = try live.map { try OTARecord($0.record) }
        let updated = OTARecord(
            entity: item.entity ?? existing?.entity ?? "record", fields: item.applied(to: existing?.fields ?? [:]))
        let isNew = uuid == nil
        let uuid = uuid ?? UUID().uuidString
        if isNew { idMap.assumeUnmapped(uuid: uuid) }  // just made: no entry to read
        try await idMap.set(luid: luid, uuid: uuid, in: tx)
        if let existing, existing == updated {
            sync.unchangedOnDevice.insert(RecordID(uuid))
            return
        }
        let incoming = SyncRecord(
            collection: collection, id: RecordID(uuid), fields: updated.storedFields, isDeleted: false, version: version)
        guard let live, changedByOthers else {
            try await tx.put(incoming)
            return
        }
        switch await policy.resolve(Conflict(local: live.record, remote: incoming, resolvingSide: .server)) {
        case .takeRemote:
            try await tx.put(incoming)
        case .keepLocal:
            try await tx.put(live.record)
        case .merged(let merged):
            try await tx.put(rekeyed(merged, collection, uuid, node: Self.serverNode))
        case .keepBoth:
            try await tx.put(live.record)
            let copy = UUID().uuidString
            var own = incoming
            own.id = RecordID(copy)
            try await tx.put(own)
            idMap.assumeUnmapped(uuid: copy)
            try await idMap.set(luid: luid, uuid: copy, in: tx)
        case .deferred:
            try await tx.put(live.record)
            conflicts[uuid] = .dictionary(updated.fields)
        }
    }

    private func rekeyed(_ record: SyncRecord, _ collection: CollectionID, _ uuid: String, node: PeerID) -> SyncRecord {
        var record = record
        record.collection = collection
        record.id = RecordID(uuid)
        record.isDeleted = false
        record.version = RecordVersion(modifiedAt: now, node: node)
        return record
    }
}

/// Slow sync: matches each record the device sends to a server record — by
/// the previous id map when it still points at a live record, else by equal
/// content — so that a slow sync never duplicates what both sides hold.
struct OTASlowSyncMatcher {
    /// The id map as loaded for the items the device sends, before the slow sync dropped it.
    private let previous: OTAIDMap
    private let collection: CollectionID
    private var unclaimedByContent: [OTARecord: [String]] = [:]
    private var claimed: Set<String> = []

    init(previous: OTAIDMap, collection: CollectionID, in tx: any StoreTransaction) async throws {
        self.previous = previous
        self.collection = collection
        for try await stored in tx.allRecords(in: collection) where !stored.record.isDeleted {
            unclaimedByContent[try OTARecord(stored.record), default: []].append(stored.record.id.rawValue)
        }
    }

    /// The server record the device's `luid` is, if any; each server record matches once.
    mutating func match(luid: String, item: OTAItem, in tx: any StoreTransaction) async throws -> String? {
        if let uuid = previous.uuid(forLUID: luid), !claimed.contains(uuid),
            let stored = try await tx.record(RecordKey(collection: collection, id: RecordID(uuid))), !stored.record.isDeleted
        {
            claimed.insert(uuid)
            return uuid
        }
        guard let entity = item.entity, let fields = item.record ?? item.changes else { return nil }
        let content = OTARecord(entity: entity, fields: fields)
        while var candidates = unclaimedByContent[content], !candidates.isEmpty {
            let uuid = candidates.removeFirst()
            unclaimedByContent[content] = candidates
            if claimed.insert(uuid).inserted { return uuid }
        }
        return nil
    }
}

extension Optional {
    /// Maps the wrapped value with an async throwing transform.
    func asyncMap<Mapped>(_ transform: (Wrapped) async throws -> Mapped) async rethrows -> Mapped? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
