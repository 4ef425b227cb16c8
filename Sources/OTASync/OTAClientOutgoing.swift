import SyncCore

/// What the device sends in a session: for each dataclass, the mode it asks
/// for and the changes it collects from the device's records; then message
/// by message, its answers to the server's commands, `sync-start` and
/// `sync-changes` split into fragments under ``OTAClient/Configuration/maxMessageBytes``.
struct OTAClientOutgoing {
    let client: OTAClient
    private var lastMessage = 0
    private var lastCommand = 0
    /// Answers to the server's commands, for the next message.
    private var answers: [OTABodyEntry] = []
    /// Whether the answers include one the server needs now (not an id map that can wait).
    private(set) var mustAnswer = false
    /// Items sent, less those the server did not process and that go again.
    private(set) var sentItems = 0

    init(client: OTAClient) {
        self.client = client
    }

    private var store: AccountStore { client.records.store.scoped(to: client.records.account) }
    private var sizer: OTAMessageSizer { OTAMessageSizer(codec: client.codec, limit: client.configuration.maxMessageBytes) }

    // MARK: Collecting a dataclass's changes

    /// Decides a dataclass's mode — `proposed` (the server's, after `E_NegotiationFailed`), the one the
    /// server's last commit asked for, else fast (slow on a first sync) — and collects what the device
    /// sends in it.
    mutating func prepare(_ sync: inout ClientDataclass, mode proposed: OTASyncMode?) async throws {
        let uri = sync.uri
        try await journalUnsentChanges(of: uri)
        let keepsSynced = client.configuration.itemType == .changes
        let (anchor, requested, pending, entries) = try await store.transaction { tx in
            (
                try await tx.metadata(OTAClientState.serverAnchor(uri)), try await tx.metadata(OTAClientState.requestedMode(uri)),
                try await tx.metadata(OTAClientState.pendingIDMap(uri)) ?? [:],
                try await tx.journal.entries(in: [CollectionID(uri)]).filter(\.isReadyToSend)
            )
        }
        // The entries' records as they are now, and (for FLD) what the server holds of them, read at once.
        let (current, ids, synced): ([RecordKey: StoredRecord], OTAIDMap, [String: OTARecord]) = try await store.transaction { [entries] tx in
            let current = try await tx.records(at: entries.map(\.key))
            let luids = entries.map(\.key.id.rawValue)
            var ids = OTAIDMap.device(dataclass: uri)
            try await ids.load(luids: luids, in: tx)
            guard keepsSynced else { return (current, ids, [:]) }
            try await tx.prefetch(luids.map { RecordKey(collection: OTAClientState.syncedCollection(uri), id: RecordID($0)) })
            var synced: [String: OTARecord] = [:]
            for luid in luids { synced[luid] = try await OTAClientState.synced(luid, uri, in: tx) }
            return (current, ids, synced)
        }
        sentItems -= sync.sentLUIDs.count - sync.outgoing.count  // sent and not processed: they go again
        let mode = proposed ?? requested ?? (anchor == nil ? .slow : .fast)
        sync.mode = mode
        sync.phase = .needsStart
        sync.pendingIDMap = pending
        sync.outgoing = []
        sync.sentRecords = [:]
        sync.sentEntries = [:]
        sync.itemType = mode == .fast ? client.configuration.itemType : .records
        sync.direction = client.configuration.directions[uri] ?? .twoWay
        switch mode {
        case .reset:
            break
        case _ where sync.direction == .toDevice:
            break  // the device's edits wait for a sync that sends them
        case .slow:
            for (luid, record) in try await client.records.records(dataclass: uri).sorted(by: { $0.key < $1.key }) {
                sync.outgoing.append((luid, record.item(.add)))
                if keepsSynced { sync.sentRecords[luid] = record }
            }
            for entry in entries { sync.sentEntries[entry.key.id.rawValue] = entry }
        case .fast:
            // What must be sent is the journal's: the entries ready to send, each with the record as it is now.
            for entry in entries {
                let luid = entry.key.id.rawValue
                sync.sentEntries[luid] = entry
                guard let stored = current[entry.key], !stored.record.isDeleted else {
                    // Sent even when the server may never have seen the record: a delete of an unknown id is a no-op there,
                    // and a record whose add reached the mingle but not its answer must not survive on the server.
                    sync.outgoing.append((luid, .delete()))
                    if keepsSynced { sync.sentRecords[luid] = .some(nil) }
                    continue
                }
                let record = try OTARecord(stored.record)
                let operation: OTAItemOperation = ids.uuid(forLUID: luid) == nil ? .add : .modify
                if sync.itemType == .changes {
                    guard let item = Self.fieldChanges(from: synced[luid], to: record, operation) else { continue }
                    sync.outgoing.append((luid, item))
                } else {
                    sync.outgoing.append((luid, record.item(operation)))
                }
                if keepsSynced { sync.sentRecords[luid] = record }
            }
        }
        sync.sentLUIDs = sync.outgoing.map(\.id)
    }

    /// A store written before the journal kept a change position instead: its changes after it
    /// become journal entries (based on nothing the device knows), once.
    private func journalUnsentChanges(of uri: String) async throws {
        let key = OTAClientState.legacySentPosition(uri)
        guard let sent = try await store.transaction({ tx in try await tx.metadata(key) }) else { return }
        var unsent: [SyncRecord] = []
        for try await page in store.changePages(after: sent, in: [CollectionID(uri)]) {
            unsent += page.records.map(\.record).filter { $0.version.node == OTADeviceRecords.localNode }
        }
        try await store.transaction { [unsent] tx in
            for record in unsent {
                try await tx.journal.recordLocalChange(
                    record.isDeleted ? .delete : .modify, local: try OTADeviceJournal.neutral(record), at: record.version.modifiedAt,
                    basedOn: nil)
            }
            try await tx.setMetadata(nil, key)
        }
    }

    /// The FLD item that turns what the server holds (`synced`) into `record`: the changed fields
    /// and the removed ones; every field when the server holds nothing yet; nil when nothing changed.
    static func fieldChanges(from synced: OTARecord?, to record: OTARecord, _ operation: OTAItemOperation) -> OTAItem? {
        guard let synced, synced.entity == record.entity else {
            return OTAItem(operation: operation, entity: record.entity, changes: record.fields, removed: [])
        }
        let changes = record.fields.filter { synced.fields[$0.key] != $0.value }
        let removed = synced.fields.keys.filter { record.fields[$0] == nil }.sorted()
        guard !changes.isEmpty || !removed.isEmpty else { return nil }
        return OTAItem(operation: .modify, entity: record.entity, changes: changes, removed: removed)
    }

    // MARK: Answers

    /// Puts an answer to a server command in the next message; `urgent` when the server needs it
    /// now, so that a final message of the server's still gets one more from the device.
    mutating func queue(_ answer: OTACommandResponse, urgent: Bool) {
        answers.append(.response(answer))
        if urgent { mustAnswer = true }
    }

    /// Whether the answers waiting for the next message carry id maps.
    var answersCarryIDMaps: Bool {
        answers.contains { if case .response(let answer) = $0 { answer.params["idmap"] != nil } else { false } }
    }

    /// The id maps a message carries, per dataclass: the server ids it maps (in `sync-changes`
    /// commands and in answers to the server's).
    static func idMaps(in message: OTAMessage) -> [String: [String]] {
        var idMaps: [String: [String]] = [:]
        for entry in message.body {
            let (name, params) =
                switch entry {
                case .command(let command): (command.knownName, command.params)
                case .response(let response): (response.knownName, response.params)
                }
            guard name == .syncChanges, let uri = params["uri"]?.stringValue, case .dictionary(let idmap)? = params["idmap"]
            else { continue }
            idMaps[uri, default: []] += idmap.keys
        }
        return idMaps
    }

    // MARK: Messages

    /// One command alone, in a session of its own: message 1, final.
    mutating func message(alone command: OTACommand) -> OTAMessage {
        lastMessage = 1
        return OTAMessage(
            header: OTAHeader(userid: client.records.account.rawValue, deviceid: client.deviceID, sequence: 1, isFinal: true),
            body: [.command(command)])
    }

    /// The next message: the answers waiting, then for each dataclass its `sync-start` (when it
    /// starts) and as much of its `sync-changes` as fits; final when everything is sent.
    mutating func nextMessage(_ syncs: inout [String: ClientDataclass]) async throws -> OTAMessage {
        lastMessage += 1
        var message = OTAMessage(
            header: OTAHeader(userid: client.records.account.rawValue, deviceid: client.deviceID, sequence: lastMessage))
        message.body = answers
        answers = []
        mustAnswer = false
        for uri in client.dataclasses {
            guard var sync = syncs[uri] else { continue }
            if sync.phase == .needsStart {
                message.body.append(.command(try await start(&sync)))
            }
            guard sync.phase == .sending else {
                syncs[uri] = sync
                continue
            }
            let command = try fittingChanges(of: &sync, in: message)
            message.body.append(.command(command))
            if !command.more { sync.phase = .waiting }
            syncs[uri] = sync
            if command.more { break }
        }
        message.header.isFinal = !syncs.values.contains { $0.phase == .needsStart || $0.phase == .sending }
        return message
    }

    /// The `sync-start` of a dataclass, with the anchors the device kept; numbers its `sync-changes` next.
    private mutating func start(_ sync: inout ClientDataclass) async throws -> OTACommand {
        let uri = sync.uri
        let (deviceAnchor, serverAnchor) = try await store.transaction { tx in
            let anchor = try await tx.metadata(OTAClientState.deviceAnchor(uri)) ?? .fresh()
            if anchor.count == 0 { try await tx.setMetadata(anchor, OTAClientState.deviceAnchor(uri)) }
            return (anchor, try await tx.metadata(OTAClientState.serverAnchor(uri)))
        }
        let anchors = OTAAnchors(
            mode: sync.mode, direction: sync.direction,
            lastDeviceAnchor: deviceAnchor.count > 0 ? "\(deviceAnchor.generation).\(deviceAnchor.count)" : nil,
            nextDeviceAnchor: "\(deviceAnchor.generation).\(deviceAnchor.count + 1)",
            lastServerAnchor: sync.mode == .fast ? serverAnchor : nil)
        lastCommand += 1
        let command = OTACommand(.syncStart, sequence: lastCommand, params: ["uri": .string(uri), "anchors": anchors.value])
        lastCommand += 1
        sync.changesSequence = lastCommand
        sync.phase = .sending
        return command
    }

    /// The dataclass's next `sync-changes`: as many of its items as fit in `message` (a fragment when
    /// some are left), with the id maps it has not delivered yet. Takes them from `sync.outgoing`.
    private mutating func fittingChanges(of sync: inout ClientDataclass, in message: OTAMessage) throws -> OTACommand {
        let room = try sizer.room(in: message)
        var used = 0
        var taken = 0
        for (luid, item) in sync.outgoing {
            let bytes = try sizer.bytes(key: luid, item: item.value)
            if used + bytes > room, taken > 0 || (room < 1_024 && !message.body.isEmpty) { break }
            used += bytes
            taken += 1
        }
        var params: [String: SyncValue] = ["uri": .string(sync.uri), "itemtype": .string(sync.itemType.rawValue)]
        if !sync.pendingIDMap.isEmpty { params["idmap"] = .dictionary(sync.pendingIDMap) }
        // The sizes are estimates: the message as encoded decides. A single record larger than the limit still goes, alone.
        var command: OTACommand
        while true {
            params["items"] = .dictionary(Dictionary(uniqueKeysWithValues: sync.outgoing.prefix(taken).map { ($0.id, $0.item.value) }))
            command = OTACommand(.syncChanges, sequence: sync.changesSequence, params: params, more: taken < sync.outgoing.count)
            let size = try sizer.bytes(of: OTAMessage(header: message.header, body: message.body + [.command(command)]))
            if size <= client.configuration.maxMessageBytes || taken <= 1 { break }
            taken = max(1, taken * client.configuration.maxMessageBytes / size - 1)
        }
        sync.outgoing.removeFirst(taken)
        sentItems += taken
        return command
    }
}
