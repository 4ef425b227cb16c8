import SyncCore

/// One session of an ``OTAClient``: builds the device's messages, sends them,
/// and processes the server's answers until the server's side is final.
struct OTAClientSession {
    let client: OTAClient
    private var cookie: String?
    private var lastMessage = 0
    private var lastCommand = 0
    private var syncs: [String: ClientDataclass] = [:]
    /// Responses to the server's commands, for the next message.
    private var responses: [OTABodyEntry] = []
    /// Whether the responses include one the server needs now (not an id map that can wait).
    private var mustAnswer = false
    /// Id maps (per dataclass, server id → device id) carried by the message in flight.
    private var idMapsInFlight: [String: [String]] = [:]
    private var report = OTASyncReport()

    init(client: OTAClient) {
        self.client = client
        for uri in client.dataclasses { syncs[uri] = ClientDataclass(uri: uri) }
    }

    private var store: AccountStore { client.records.store.scoped(to: client.records.account) }
    private var sizer: OTAMessageSizer { OTAMessageSizer(codec: client.codec, limit: client.maxMessageBytes) }

    mutating func run() async throws -> OTASyncReport {
        for uri in client.dataclasses { try await prepare(uri, mode: nil) }
        var message = try await nextMessage()
        while true {
            let reply = try await send(message)
            try await process(reply)
            let moreToSend = syncs.values.contains { $0.phase == .needsStart || $0.phase == .sending }
            if reply.header.isFinal && !moreToSend {
                if mustAnswer || (!client.defersIDMap && !idMapsInFlight.isEmpty) {
                    let last = try await nextMessage()
                    let answer = try await send(last)
                    try await process(answer)
                }
                break
            }
            guard report.roundTrips < 100_000 else { throw OTAClientError(OTAResult(.failed, "the session does not end")) }
            message = try await nextMessage()
        }
        if let failure = syncs.values.compactMap(\.failure).first { throw failure }
        for (uri, sync) in syncs { report.modes[uri] = sync.mode }
        return report
    }

    /// Sends one stateless command in a session of its own and checks its answer.
    mutating func runAlone(_ command: OTACommand) async throws {
        lastMessage = 1
        let message = OTAMessage(
            header: OTAHeader(
                userid: client.records.account.rawValue, deviceid: client.deviceID, sequence: 1, isFinal: true),
            body: [.command(command)])
        let reply = try await send(message)
        guard let result = reply.responses.first(where: { $0.sequence == command.sequence })?.results.first else {
            throw OTAClientError(OTAResult(.failed, "the server did not answer \(command.name)"))
        }
        guard result.status.isSuccess else { throw OTAClientError(result) }
    }

    // MARK: Preparing a dataclass

    /// Decides a dataclass's mode and collects what the device sends in it.
    private mutating func prepare(_ uri: String, mode proposed: OTASyncMode?) async throws {
        let snapshot = try await store.latestPosition()
        let (anchor, requested, sent, ids, pending) = try await store.transaction { tx in
            (
                try await OTAClientState.serverAnchor(uri, in: tx), try await OTAClientState.requestedMode(uri, in: tx),
                try await OTAClientState.sentPosition(uri, in: tx), try await OTAClientState.ids(uri, in: tx),
                try await OTAClientState.pendingIDMap(uri, in: tx)
            )
        }
        let mode = proposed ?? requested ?? (anchor == nil ? .slow : .fast)
        var sync = syncs[uri]!
        sync.mode = mode
        sync.phase = .needsStart
        sync.snapshot = snapshot
        sync.pendingIDMap = pending
        sync.outgoing = []
        sync.sentRecords = [:]
        sync.itemType = mode == .fast ? client.itemType : .records
        let keepsSynced = client.itemType == .changes
        sync.direction = client.directions[uri] ?? .twoWay
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
        case .fast:
            var after = sent
            while true {
                let page = try await store.changes(after: after, in: [CollectionID(uri)], limit: 1_000)
                for stored in page.records where stored.record.version.node == OTADeviceRecords.localNode {
                    let luid = stored.record.id.rawValue
                    if stored.record.isDeleted {
                        // Sent even when the server may never have seen the record: a delete of an unknown id is a no-op there,
                        // and a record whose add reached the mingle but not its answer must not survive on the server.
                        sync.outgoing.append((luid, .delete()))
                        if keepsSynced { sync.sentRecords[luid] = .some(nil) }
                    } else {
                        let record = try OTARecord(stored.record)
                        let operation: OTAItemOperation = ids[luid] == nil ? .add : .modify
                        if sync.itemType == .changes {
                            let synced = try await store.transaction { tx in try await OTAClientState.synced(luid, uri, in: tx) }
                            guard let item = Self.fieldChanges(from: synced, to: record, operation) else { continue }
                            sync.outgoing.append((luid, item))
                        } else {
                            sync.outgoing.append((luid, record.item(operation)))
                        }
                        if keepsSynced { sync.sentRecords[luid] = record }
                    }
                }
                after = page.lastPosition
                guard page.hasMore else { break }
            }
        }
        sync.sentLUIDs = sync.outgoing.map(\.id)
        syncs[uri] = sync
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

    // MARK: Building and sending messages

    private mutating func nextMessage() async throws -> OTAMessage {
        lastMessage += 1
        var message = OTAMessage(
            header: OTAHeader(userid: client.records.account.rawValue, deviceid: client.deviceID, sequence: lastMessage))
        message.body = responses
        responses = []
        mustAnswer = false
        for uri in client.dataclasses {
            guard var sync = syncs[uri] else { continue }
            if sync.phase == .needsStart {
                let (deviceAnchor, serverAnchor) = try await store.transaction { tx in
                    let anchor = try await OTAClientState.deviceAnchor(uri, in: tx)
                    if anchor.count == 0 { try await OTAClientState.setDeviceAnchor(anchor, uri, in: tx) }
                    return (anchor, try await OTAClientState.serverAnchor(uri, in: tx))
                }
                let anchors = OTAAnchors(
                    mode: sync.mode, direction: sync.direction,
                    lastDeviceAnchor: deviceAnchor.count > 0 ? "\(deviceAnchor.generation).\(deviceAnchor.count)" : nil,
                    nextDeviceAnchor: "\(deviceAnchor.generation).\(deviceAnchor.count + 1)",
                    lastServerAnchor: sync.mode == .fast ? serverAnchor : nil)
                lastCommand += 1
                message.body.append(.command(OTACommand(
                    name: "sync-start", sequence: lastCommand, params: ["uri": .string(uri), "anchors": anchors.value])))
                lastCommand += 1
                sync.changesSequence = lastCommand
                sync.phase = .sending
            }
            guard sync.phase == .sending else {
                syncs[uri] = sync
                continue
            }
            let room = try sizer.room(in: message)
            var used = 0
            var taken = 0
            for (luid, item) in sync.outgoing {
                let bytes = try sizer.bytes(key: luid, item: item.value)
                if used + bytes > room, taken > 0 || (room < 1_024 && !message.body.isEmpty) { break }
                used += bytes
                taken += 1
            }
            var params: [String: SyncValue] = ["uri": .string(uri), "itemtype": .string(sync.itemType.rawValue)]
            if !sync.pendingIDMap.isEmpty { params["idmap"] = .dictionary(sync.pendingIDMap) }
            // The sizes are estimates: the message as encoded decides. A single record larger than the limit still goes, alone.
            var command: OTACommand
            while true {
                params["items"] = .dictionary(Dictionary(uniqueKeysWithValues: sync.outgoing.prefix(taken).map { ($0.id, $0.item.value) }))
                command = OTACommand(name: "sync-changes", sequence: sync.changesSequence, params: params, more: taken < sync.outgoing.count)
                let size = try sizer.bytes(of: OTAMessage(header: message.header, body: message.body + [.command(command)]))
                if size <= client.maxMessageBytes || taken <= 1 { break }
                taken = max(1, taken * client.maxMessageBytes / size - 1)
            }
            sync.outgoing.removeFirst(taken)
            report.sentItems += taken
            let more = command.more
            if !sync.pendingIDMap.isEmpty { idMapsInFlight[uri, default: []] += sync.pendingIDMap.keys }
            message.body.append(.command(command))
            if !more { sync.phase = .waiting }
            syncs[uri] = sync
            if more { break }
        }
        message.header.isFinal = !syncs.values.contains { $0.phase == .needsStart || $0.phase == .sending }
        return message
    }

    /// Sends a message and reads the answer; a message without an answer is sent again, byte for byte.
    private mutating func send(_ message: OTAMessage) async throws -> OTAMessage {
        let body = try client.codec.encode(message.value)
        let mediaType = OTAMediaType.answer(for: client.codec)
        var attempt = 0
        while true {
            do {
                report.roundTrips += 1
                let response = try await client.transport.send(
                    SyncRequest(
                        method: .post, path: client.path, contentType: mediaType, accept: mediaType, session: cookie,
                        userAgent: "Anchorage-OTA/\(AnchorageVersion.current)", body: body))
                guard response.isSuccess else {
                    if response.status >= 500, attempt < client.retries {
                        attempt += 1
                        continue
                    }
                    throw OTAClientError(OTAResult(.serviceError, "HTTP \(response.status): \(String(decoding: response.body.prefix(200), as: UTF8.self))"))
                }
                if let session = response.session { cookie = session }
                let reply = try OTAMessage(try client.codec.decode(response.body))
                if let result = reply.header.result?.first { throw OTAClientError(result) }
                return reply
            } catch let error as TransportError where attempt < client.retries {
                _ = error
                attempt += 1
            }
        }
    }

    // MARK: Processing the server's answer

    private mutating func process(_ reply: OTAMessage) async throws {
        try await delivered(idMaps: idMapsInFlight)
        idMapsInFlight = [:]
        for entry in reply.body {
            switch entry {
            case .response(let response): try await take(response)
            case .command(let command): try await run(command)
            }
        }
    }

    /// The server answered the message that carried these id maps: they are no longer pending.
    private mutating func delivered(idMaps: [String: [String]]) async throws {
        guard !idMaps.isEmpty else { return }
        try await store.transaction { tx in
            for (uri, uuids) in idMaps {
                var pending = try await OTAClientState.pendingIDMap(uri, in: tx)
                for uuid in uuids { pending[uuid] = nil }
                try await OTAClientState.setPendingIDMap(pending, uri, in: tx)
            }
        }
        for uri in idMaps.keys { syncs[uri]?.pendingIDMap = [:] }
    }

    private mutating func take(_ response: OTACommandResponse) async throws {
        guard let uri = response.uri, var sync = syncs[uri], let result = response.results.first else { return }
        switch (response.name, result.status) {
        case ("sync-start", .ok):
            break
        case ("sync-start", .negotiationFailed):
            let proposed = try response.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) }?.mode ?? .slow
            guard sync.renegotiations < 2 else {
                sync.failure = OTAClientError(result, dataclass: uri)
                sync.phase = .failed
                break
            }
            sync.renegotiations += 1
            report.sentItems -= sync.sentLUIDs.count - sync.outgoing.count  // not processed; sent again
            syncs[uri] = sync
            try await prepare(uri, mode: proposed)
            return
        case ("sync-changes", .notCompleted):
            break
        case ("sync-changes", .commandNotProcessed) where sync.phase == .needsStart:
            break  // its sync-start failed; it starts again in the mode the server wants
        case ("sync-changes", .ok):
            let anchor = try response.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) }?.nextServerAnchor
            if !sync.mingled { try await markMingled(&sync, serverAnchor: anchor) }
        default:
            if !result.status.isSuccess {
                sync.failure = sync.failure ?? OTAClientError(result, dataclass: uri)
                sync.phase = .failed
            }
        }
        syncs[uri] = sync
    }

    /// The mingle checkpoint: the device's changes up to the session's snapshot are on the server.
    private func markMingled(_ sync: inout ClientDataclass, serverAnchor: String?) async throws {
        let (uri, snapshot, sent, mode, sentRecords) = (sync.uri, sync.snapshot, sync.sentLUIDs, sync.mode, sync.sentRecords)
        let sentAll = sync.direction != .toDevice
        try await store.transaction { tx in
            if sentAll { try await OTAClientState.setSentPosition(snapshot, uri, in: tx) }
            for (luid, record) in sentRecords { try await OTAClientState.setSynced(record, luid, uri, in: tx) }
            var ids = mode == .fast ? try await OTAClientState.ids(uri, in: tx) : [:]
            for luid in sent where ids[luid] == nil { ids[luid] = "" }
            try await OTAClientState.setIDs(ids, uri, in: tx)
            if let serverAnchor { try await OTAClientState.setServerAnchor(serverAnchor, uri, in: tx) }
        }
        sync.mingled = true
    }

    private mutating func run(_ command: OTACommand) async throws {
        func answer(_ result: OTAResult, params: [String: SyncValue] = [:]) {
            var params = params
            if let uri = command.params["uri"] { params["uri"] = uri }
            responses.append(.response(OTACommandResponse(name: command.name, sequence: command.sequence, params: params, results: [result])))
        }
        switch command.name {
        case "get" where command.uri == "deviceinfo":
            answer(.ok, params: ["value": .dictionary(client.deviceInfo)])
            mustAnswer = true
        case "get", "put", "delete":
            answer(OTAResult(.notFound, "no such resource on this device", paramName: "uri"))
            mustAnswer = true
        case "sync-changes":
            guard let uri = command.uri, var sync = syncs[uri] else {
                answer(OTAResult(.notSupported, "this device does not sync \(command.uri ?? "that")", paramName: "uri"))
                return
            }
            do {
                let apply = try OTADeviceApply(
                    uri: uri, sync: sync, command: command, now: client.records.clock.now(), keepsSynced: client.itemType == .changes)
                if !sync.mingled {
                    // The server pushes only after its mingle: the device's changes are in.
                    try await markMingled(&sync, serverAnchor: nil)
                }
                let applied = try await apply.apply(in: store)
                sync.droppedForReset = sync.droppedForReset || sync.mode == .reset
                sync.phase = sync.phase == .failed ? .failed : .receiving
                report.receivedItems += applied.count
                report.conflicts += applied.conflicts
                syncs[uri] = sync
                var params: [String: SyncValue] = [:]
                if !applied.newIDs.isEmpty {
                    params["idmap"] = .dictionary(applied.newIDs.mapValues(SyncValue.string))
                    idMapsInFlight[uri, default: []] += applied.newIDs.keys
                }
                answer(.ok, params: params)
            } catch let error as OTAMessageError {
                answer(error.result)
                mustAnswer = true
            }
        case "sync-commit":
            guard let uri = command.uri, var sync = syncs[uri] else { return }
            let anchors = try command.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) }
            try await store.transaction { tx in
                if let anchor = anchors?.nextServerAnchor { try await OTAClientState.setServerAnchor(anchor, uri, in: tx) }
                var device = try await OTAClientState.deviceAnchor(uri, in: tx)
                device.count += 1
                try await OTAClientState.setDeviceAnchor(device, uri, in: tx)
                let next = anchors?.mode
                try await OTAClientState.setRequestedMode(next == .fast ? nil : next, uri, in: tx)
            }
            sync.phase = .committed
            syncs[uri] = sync
            answer(.ok)
        case "sync-cancel":
            if let uri = command.uri { syncs[uri]?.phase = .committed }
            answer(.ok)
        default:
            answer(OTAResult(.unknownCommand, "unknown command '\(command.name)'"))
            mustAnswer = true
        }
    }
}

/// Where one dataclass stands in a device's session.
struct ClientDataclass {
    enum Phase { case needsStart, sending, waiting, receiving, committed, failed }

    let uri: String
    var phase: Phase = .needsStart
    var mode: OTASyncMode = .fast
    /// The device's changes up to this position are what the session sends.
    var snapshot: ChangePosition = .start
    /// Items still to send.
    var outgoing: [(id: String, item: OTAItem)] = []
    /// Every device id the session sends.
    var sentLUIDs: [String] = []
    /// FLD: what the server will hold of each record sent once it is mingled (nil: deleted).
    var sentRecords: [String: OTARecord?] = [:]
    /// Whole records or changed fields, for this session's mode.
    var itemType: OTAItemType = .records
    /// Which way this dataclass syncs.
    var direction: OTADirection = .twoWay
    var pendingIDMap: [String: SyncValue] = [:]
    var changesSequence = 0
    var renegotiations = 0
    var mingled = false
    var droppedForReset = false
    var failure: OTAClientError?
}
