import Foundation
import SyncCore

/// The next part of the server's changes for one dataclass: as many items as
/// fit in the room left in a message, in order of change position, and the
/// position up to which the device will then hold everything (the checkpoint).
struct OTAPushBatch {
    /// The items, keyed by the device's LUID where the id map has one, else the server's UUID.
    var items: [String: SyncValue] = [:]
    /// Every server change up to here is in this batch or an earlier one.
    var cursor: ChangePosition
    /// Whether more changes wait for the next message.
    var hasMore: Bool

    /// What the push needs to know of the device, read once per message and dataclass; the id map's
    /// entries are read a page of changes at a time.
    struct DeviceView: Sendable {
        /// The device, as the peer its state is kept under.
        var peer: PeerID
        /// UUID → the device's version, for conflicts sent to the user.
        var conflicts: [String: SyncValue]
        var filter: OTADataclassFilter?

        static func read(_ uri: String, peer: PeerID, from store: AccountStore) async throws -> DeviceView {
            let (conflicts, filterValue) = try await store.transaction { tx in
                var idMap = OTAIDMap.server(dataclass: uri, device: peer)
                try await idMap.load(in: tx)  // takes over an earlier version's map before the pages read it
                let values = try await tx.metadata(at: [OTADeviceState.conflictsKey(uri), OTADeviceState.filterKey(uri)], for: peer)
                return (values[OTADeviceState.conflictsKey(uri)]?.dictionaryValue ?? [:], values[OTADeviceState.filterKey(uri)]?.dictionaryValue)
            }
            let filter = try filterValue.map { value throws(OTAMessageError) in try OTADataclassFilter(value) }
            return DeviceView(peer: peer, conflicts: conflicts, filter: filter)
        }
    }

    static func next(
        for sync: DataclassSync, device: DeviceView, store: AccountStore, node: PeerID, sizer: OTAMessageSizer, room: Int,
        now: Date
    ) async throws -> OTAPushBatch {
        let latest = try await store.latestPosition()
        // Nothing goes to the device: its anchor stays where it was, so a later two-way sync sends what it missed.
        guard sync.direction != .toServer else { return OTAPushBatch(cursor: sync.pushCursor, hasMore: false) }
        let uri = sync.uri
        let (conflicts, filter, peer) = (device.conflicts, device.filter, device.peer)
        var batch = OTAPushBatch(cursor: sync.pushCursor, hasMore: false)
        var used = 0
        for try await page in store.changePages(after: batch.cursor, in: [CollectionID(uri)], pageSize: 200) {
            let idMap = try await store.store.readCommitted(for: store.account) { tx in
                var idMap = OTAIDMap.server(dataclass: uri, device: peer)
                try await idMap.load(uuids: page.records.map(\.record.id.rawValue), in: tx)
                return idMap
            }
            for stored in page.records {
                let record = stored.record
                let uuid = record.id.rawValue
                let luid = idMap.luid(forUUID: uuid)
                let content = try record.isDeleted ? nil : OTARecord(record)
                // A record the device's filter leaves out is not sent; one the device holds is deleted there.
                let filteredOut = content.map { filter?.admits($0.fields, now: now) == false } ?? false
                let skip =
                    filteredOut
                    ? luid == nil
                    : record.version.node == node || sync.unchangedOnDevice.contains(record.id)
                        || (record.isDeleted && (luid == nil || sync.mode != .fast))
                if !skip {
                    var item =
                        if let content, !filteredOut { content.item(luid == nil ? .add : .modify) } else { OTAItem.delete() }
                    if case .dictionary(let deviceVersion)? = conflicts[uuid] { item.conflict = deviceVersion }
                    let key = luid ?? uuid
                    let bytes = try sizer.bytes(key: key, item: item.value)
                    if used + bytes > room, !batch.items.isEmpty {
                        batch.hasMore = true
                        return batch
                    }
                    batch.items[key] = item.value
                    used += bytes
                }
                batch.cursor = stored.position
            }
        }
        batch.cursor = max(batch.cursor, latest)
        return batch
    }

    /// The batch as commands numbered from `firstSequence`: its `sync-changes` (a fragment while more
    /// follows) with the checkpoint, and the `sync-commit` when it is the last. Its value is `sync` as it
    /// stands once they are sent.
    func part(of sync: DataclassSync, firstSequence: Int) -> OTAAnswerBuilder.Part<DataclassSync> {
        var sync = sync
        sync.pushCursor = cursor
        let checkpoint = sync.serverAnchor(at: cursor)
        var params: [String: SyncValue] = [
            "uri": .string(sync.uri), "itemtype": .string(OTAItemType.records.rawValue), "items": .dictionary(items),
            "anchors": OTAAnchors(mode: sync.mode, nextServerAnchor: checkpoint).value,
        ]
        if hasMore { params["more"] = true }
        var entries: [OTABodyEntry] = [.command(OTACommand(.syncChanges, sequence: firstSequence, params: params, more: hasMore))]
        if !hasMore {
            entries.append(.command(OTACommand(
                .syncCommit, sequence: firstSequence + 1,
                params: ["uri": .string(sync.uri), "anchors": OTAAnchors(mode: .fast, nextServerAnchor: checkpoint).value])))
            sync.phase = .committed
        }
        return OTAAnswerBuilder.Part(entries: entries, itemCount: items.count, value: sync)
    }
}
