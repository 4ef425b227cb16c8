import Foundation
import SyncCore

/// Processes one device message against a session and builds the answer:
/// the responses to its commands in order, then the server's own commands —
/// a `get deviceinfo` on a device's first sync, each dataclass's changes
/// (split under the size limit) and commits.
struct OTAMessageProcessor {
    let server: OTAServer
    var session: OTAServerSession
    let sizer: OTAMessageSizer

    private var answer: [OTABodyEntry] = []
    /// sync-changes responses (by body index and dataclass) that say `S_NotCompleted` until the mingle.
    private var waitingResponses: [(index: Int, uri: String)] = []
    /// What the push knows of the device, per dataclass, read once for this message.
    private var deviceViews: [String: OTAPushBatch.DeviceView] = [:]

    init(server: OTAServer, session: OTAServerSession, sizer: OTAMessageSizer) {
        self.server = server
        self.session = session
        self.sizer = sizer
    }

    private var store: AccountStore { server.store.scoped(to: session.account) }

    /// - Throws: ``OTAMessageError`` when the message cannot be processed at all (nothing was applied).
    mutating func process(_ message: OTAMessage) async throws -> OTAMessage {
        try Self.validate(message.responses, dataclasses: server.dataclasses)
        for response in message.responses { try await take(response) }
        var failedFamilies: Set<String> = []
        for command in message.commands {
            let family = command.name.hasPrefix("sync-") ? "sync:\(command.uri ?? "")" : nil
            if let family, failedFamilies.contains(family) {
                respond(to: command, OTAResult(.commandNotProcessed, "an earlier command for \(command.uri ?? "this dataclass") failed"))
                continue
            }
            let result: OTAResult
            do {
                result = try await run(command)
            } catch let error as OTAMessageError {
                result = error.result
                respond(to: command, result)
            }
            if let family, !result.status.isSuccess { failedFamilies.insert(family) }
        }
        try await mingleIfReady()
        try await askDeviceInfoOnFirstSync()
        try await push()
        session.lastSent += 1
        let isFinal = session.syncs.values.allSatisfy { $0.phase == .committed || $0.phase == .canceled }
        return OTAMessage(
            header: OTAHeader(
                userid: session.account.rawValue, deviceid: session.deviceID, sequence: session.lastSent, isFinal: isFinal),
            body: answer)
    }

    // MARK: Responses from the device

    private mutating func take(_ response: OTACommandResponse) async throws {
        switch response.name {
        case "sync-changes":
            if let uri = response.uri, let idmap = response.params["idmap"] { try await merge(try Self.idMapPairs(idmap), uri: uri) }
        case "get":
            if response.uri == "deviceinfo", response.status?.isSuccess == true,
                case .dictionary(let info)? = response.params["value"]
            {
                let peer = session.peer
                try await store.transaction { tx in
                    try await tx.setMetadata(.dictionary(info), OTADeviceState.deviceInfoKey, for: peer)
                }
            }
        default:
            break
        }
    }

    /// Reads an `idmap` parameter: server UUIDs to device LUIDs.
    static func idMapPairs(_ idmap: SyncValue) throws(OTAMessageError) -> [(uuid: String, luid: String)] {
        guard case .dictionary(let pairs) = idmap else {
            throw OTAMessageError.paramError("idmap", "idmap must be a dictionary of server ids to device ids")
        }
        var luids: [(uuid: String, luid: String)] = []
        for (uuid, luid) in pairs {
            guard case .string(let luid) = luid else {
                throw OTAMessageError(OTAResult(.paramError, "idmap values must be strings", paramName: "idmap", paramKey: uuid))
            }
            luids.append((uuid, luid))
        }
        return luids
    }

    /// Checks the device's command responses before anything is applied: a malformed one
    /// means the message is not processed at all.
    static func validate(_ responses: [OTACommandResponse], dataclasses: Set<String>) throws(OTAMessageError) {
        for response in responses where response.name == "sync-changes" {
            guard let idmap = response.params["idmap"] else { continue }
            guard let uri = response.uri, dataclasses.contains(uri) else {
                throw OTAMessageError(OTAResult(.badRequest, "an idmap answers sync-changes of a dataclass synced here", paramName: "uri"))
            }
            do {
                _ = try idMapPairs(idmap)
            } catch {
                throw OTAMessageError(OTAResult(
                    .badRequest, "a sync-changes response carries an unreadable idmap: \(error.result.detail ?? "")",
                    paramName: "idmap", paramKey: error.result.paramKey))
            }
        }
    }

    /// Takes a device's id map (server UUID → device LUID) into the stored one.
    private func merge(_ entries: [(uuid: String, luid: String)], uri: String) async throws {
        let peer = session.peer
        try await store.transaction { tx in
            var map = OTAIDMap(try await tx.metadata(OTADeviceState.idMapKey(uri), for: peer))
            for entry in entries { map.set(luid: entry.luid, uuid: entry.uuid) }
            try await tx.setMetadata(map.value, OTADeviceState.idMapKey(uri), for: peer)
        }
    }

    // MARK: Commands

    private mutating func respond(to command: OTACommand, _ result: OTAResult, params: [String: SyncValue] = [:]) {
        var params = params
        if let uri = command.params["uri"], params["uri"] == nil { params["uri"] = uri }
        answer.append(.response(OTACommandResponse(name: command.name, sequence: command.sequence, params: params, results: [result])))
    }

    private mutating func run(_ command: OTACommand) async throws -> OTAResult {
        switch command.name {
        case "get", "put", "delete": return try await primitive(command)
        case "sync-start": return try await start(command)
        case "sync-changes": return try await changes(command)
        case "sync-commit": return try commit(command)
        case "sync-cancel": return try cancel(command)
        default:
            let result = OTAResult(.unknownCommand, "unknown command '\(command.name)'")
            respond(to: command, result)
            return result
        }
    }

    private func requiredURI(_ command: OTACommand) throws(OTAMessageError) -> String {
        switch command.params["uri"] {
        case nil: throw .missingParam("uri")
        case .string(let uri)?: return uri
        default: throw .paramError("uri", "uri must be a string")
        }
    }

    /// The dataclass a sync command names, refused when it is not synced here.
    private func dataclass(_ command: OTACommand) throws(OTAMessageError) -> String {
        let uri = try requiredURI(command)
        guard server.dataclasses.contains(uri) else {
            throw OTAMessageError(OTAResult(.notSupported, "dataclass \(uri) is not synced here", paramName: "uri"))
        }
        guard !server.disabledDataclasses.contains(uri) else {
            throw OTAMessageError(OTAResult(.notAllowed, "dataclass \(uri) is switched off", paramName: "uri"))
        }
        return uri
    }

    // MARK: get, put, delete

    private mutating func primitive(_ command: OTACommand) async throws -> OTAResult {
        let uri = try requiredURI(command)
        let key: String
        if uri == "deviceinfo" {
            key = OTADeviceState.deviceInfoKey
        } else if uri.hasPrefix("dataclass/"), uri.hasSuffix("/filter") {
            let name = String(uri.dropFirst("dataclass/".count).dropLast("/filter".count))
            guard server.dataclasses.contains(name) else {
                throw OTAMessageError(OTAResult(.notFound, "no dataclass \(name)", paramName: "uri"))
            }
            key = OTADeviceState.filterKey(name)
        } else {
            throw OTAMessageError(OTAResult(.notFound, "unknown uri \(uri)", paramName: "uri"))
        }
        let peer = session.peer
        switch command.name {
        case "get":
            let value = try await store.transaction { tx in try await tx.metadata(key, for: peer) }
            guard let value else { throw OTAMessageError(OTAResult(.notFound, "\(uri) is not set", paramName: "uri")) }
            respond(to: command, .ok, params: ["value": value])
        case "put":
            guard let value = command.params["value"] else { throw OTAMessageError.missingParam("value") }
            guard case .dictionary(let dictionary) = value else { throw OTAMessageError.paramError("value", "value must be a dictionary") }
            let filtered = try filteredDataclass(uri, value: dictionary)
            try await store.transaction { tx in
                try await tx.setMetadata(value, key, for: peer)
                if let filtered { try await Self.slowSyncNext(filtered, peer: peer, in: tx) }
            }
            respond(to: command, .ok)
        default:
            guard key != OTADeviceState.deviceInfoKey else {
                throw OTAMessageError(OTAResult(.notAllowed, "deviceinfo cannot be deleted", paramName: "uri"))
            }
            let filtered = try filteredDataclass(uri, value: nil)
            try await store.transaction { tx in
                try await tx.setMetadata(nil, key, for: peer)
                if let filtered { try await Self.slowSyncNext(filtered, peer: peer, in: tx) }
            }
            respond(to: command, .ok)
        }
        return .ok
    }

    /// The dataclass a filter URI names (checking a filter's value), or nil for `deviceinfo`.
    private func filteredDataclass(_ uri: String, value: [String: SyncValue]?) throws(OTAMessageError) -> String? {
        guard uri != "deviceinfo" else { return nil }
        if let value { _ = try OTADataclassFilter(value) }
        return String(uri.dropFirst("dataclass/".count).dropLast("/filter".count))
    }

    /// A changed filter changes what the device should hold: its next sync of the dataclass is slow,
    /// so it receives what the filter now admits and drops what it no longer does.
    private static func slowSyncNext(_ dataclass: String, peer: PeerID, in tx: any StoreTransaction) async throws {
        var state = OTADeviceState(try await tx.metadata(OTADeviceState.key(dataclass), for: peer))
        guard state.generation != nil, state.requestedMode != .reset else { return }
        state.requestedMode = .slow
        try await tx.setMetadata(state.value, OTADeviceState.key(dataclass), for: peer)
    }

    /// On a device's first sync, asks for its info (the answer comes in its next message).
    private mutating func askDeviceInfoOnFirstSync() async throws {
        guard !session.askedDeviceInfo, !session.syncs.isEmpty else { return }
        session.askedDeviceInfo = true
        let peer = session.peer
        let known = try await store.transaction { tx in try await tx.metadata(OTADeviceState.deviceInfoKey, for: peer) }
        guard known == nil else { return }
        answer.append(.command(OTACommand(name: "get", sequence: session.nextCommandSequence(), params: ["uri": "deviceinfo"])))
    }

    // MARK: sync-start

    private mutating func start(_ command: OTACommand) async throws -> OTAResult {
        let uri = try dataclass(command)
        if let existing = session.syncs[uri], existing.phase != .negotiationFailed, existing.phase != .canceled {
            throw OTAMessageError(OTAResult(.stateError, "\(uri) has already started in this session", paramName: "uri"))
        }
        let anchors = try command.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) } ?? OTAAnchors()
        if let version = anchors.serverVersion, version != server.dataclassVersion {
            throw OTAMessageError(
                OTAResult(.versionNotSupported, "server_version \(server.dataclassVersion) only", paramName: "anchors", paramKey: "server_version"))
        }
        let peer = session.peer
        let state = try await store.transaction { tx in
            OTADeviceState(try await tx.metadata(OTADeviceState.key(uri), for: peer))
        }
        let latestPosition = try await store.latestPosition()
        let requested = anchors.mode ?? .fast
        var sync = DataclassSync(uri: uri, phase: .pulling)
        sync.direction = anchors.direction ?? .twoWay
        sync.nextDeviceAnchor = anchors.nextDeviceAnchor
        sync.generation = state.generation

        var proposed: OTASyncMode?
        if let wanted = state.requestedMode, wanted != requested, requested != .reset {
            proposed = wanted
        } else if requested == .fast {
            if let position = state.position(of: anchors.lastServerAnchor), position <= latestPosition,
                state.deviceAnchors.isEmpty || anchors.lastDeviceAnchor.map(state.deviceAnchors.contains) ?? true
            {
                sync.anchorPosition = position
            } else {
                proposed = .slow
            }
        }
        if let proposed {
            sync.phase = .negotiationFailed
            sync.mode = proposed
            if session.syncs[uri] == nil { session.order.append(uri) }
            session.syncs[uri] = sync
            let result = OTAResult(.negotiationFailed, "\(uri) needs a \(proposed.rawValue) sync")
            respond(to: command, result, params: ["anchors": OTAAnchors(mode: proposed).value])
            return result
        }
        sync.mode = requested
        if session.syncs[uri] == nil { session.order.append(uri) }
        session.syncs[uri] = sync
        respond(
            to: command, .ok,
            params: ["anchors": OTAAnchors(mode: requested, direction: sync.direction, serverVersion: server.dataclassVersion).value])
        return .ok
    }

    // MARK: sync-changes

    private mutating func changes(_ command: OTACommand) async throws -> OTAResult {
        let uri = try dataclass(command)
        guard var sync = session.syncs[uri], sync.phase != .negotiationFailed, sync.phase != .canceled else {
            throw OTAMessageError(OTAResult(.stateError, "sync-changes for \(uri) before its sync-start", paramName: "uri"))
        }
        let itemType: OTAItemType
        switch command.params["itemtype"] {
        case nil: itemType = .records
        case .string(let name)?:
            guard let known = OTAItemType(rawValue: name) else { throw OTAMessageError.badValue("itemtype", "itemtype must be records or changes") }
            itemType = known
        default: throw OTAMessageError.paramError("itemtype", "itemtype must be a string")
        }
        let items: [(id: String, item: OTAItem)]
        switch command.params["items"] {
        case nil: throw OTAMessageError.missingParam("items")
        case .dictionary(let dictionary)?:
            items = try dictionary.sorted { $0.key < $1.key }.map { key, value throws(OTAMessageError) in
                (key, try OTAItem(value, key: key, itemType: itemType))
            }
        default: throw OTAMessageError.paramError("items", "items must be a dictionary keyed by record id")
        }
        let idMap = try command.params["idmap"].map { value throws(OTAMessageError) in try Self.idMapPairs(value) }

        guard sync.phase == .pulling else {
            // After the pull phase only id maps may come (a deferred idmap, say).
            guard items.isEmpty else {
                throw OTAMessageError(OTAResult(.stateError, "\(uri) has finished its pull phase", paramName: "items"))
            }
            if let idMap { try await merge(idMap, uri: uri) }
            respond(to: command, .ok)
            return .ok
        }
        if sync.direction == .toDevice, !items.isEmpty {
            throw OTAMessageError(OTAResult(.notAllowed, "\(uri) syncs to the device only", paramName: "items"))
        }
        if let idMap { try await merge(idMap, uri: uri) }
        if sync.mode != .reset { sync.items += items }
        if !command.more { sync.phase = .pulled }
        session.syncs[uri] = sync
        respond(to: command, OTAResult(.notCompleted))
        if !command.more { waitingResponses.append((answer.count - 1, uri)) }
        return OTAResult(.notCompleted)
    }

    // MARK: sync-commit, sync-cancel

    private mutating func commit(_ command: OTACommand) throws(OTAMessageError) -> OTAResult {
        let uri = try dataclass(command)
        guard let sync = session.syncs[uri], sync.phase == .committed else {
            let result = OTAResult(.stateError, "sync-commit before the server's commit", paramName: "uri")
            respond(to: command, result)
            return result
        }
        respond(to: command, .ok)
        return .ok
    }

    private mutating func cancel(_ command: OTACommand) throws(OTAMessageError) -> OTAResult {
        let uri = try dataclass(command)
        guard var sync = session.syncs[uri], sync.phase != .committed else {
            let result = OTAResult(.stateError, "nothing to cancel", paramName: "uri")
            respond(to: command, result)
            return result
        }
        sync.phase = .canceled
        sync.items = []
        session.syncs[uri] = sync
        respond(to: command, .ok)
        return .ok
    }

    // MARK: Mingle

    /// Mingles every dataclass of the session in one transaction once all have finished their pull phase.
    private mutating func mingleIfReady() async throws {
        let ready = session.order.filter { session.syncs[$0]?.phase == .pulled }
        guard !ready.isEmpty, !session.syncs.values.contains(where: \.blocksMingle) else { return }
        let syncs = ready.map { session.syncs[$0]! }
        let mingler = OTAMingler(
            syncs: syncs, peer: session.peer, node: session.node, policy: server.policy, now: server.clock.now())
        let mingled = try await store.transaction { tx in try await mingler.mingle(in: tx) }
        for var sync in mingled {
            sync.phase = .pushing
            sync.pushCursor = sync.mode == .fast ? sync.anchorPosition : .start
            sync.items = []
            session.syncs[sync.uri] = sync
        }
        for waiting in waitingResponses {
            // A dataclass canceled after its changes was not mingled: its answer stays S_NotCompleted.
            guard case .response(var response) = answer[waiting.index], let sync = session.syncs[waiting.uri],
                sync.phase == .pushing
            else { continue }
            response.results = [.ok]
            response.params["anchors"] = OTAAnchors(mode: sync.mode, nextServerAnchor: anchor(sync, at: sync.anchorPosition)).value
            answer[waiting.index] = .response(response)
        }
    }

    private func anchor(_ sync: DataclassSync, at position: ChangePosition) -> String {
        var state = OTADeviceState()
        state.generation = sync.generation
        return state.anchor(at: position)
    }

    // MARK: Push

    /// Adds the server's changes of every pushing dataclass, then their commits: first every
    /// dataclass whose changes fit whole (so they commit in this message), then fragments of the
    /// others, as much as fits.
    private mutating func push() async throws {
        var split: [String] = []
        for uri in session.order where session.syncs[uri]?.phase == .pushing {
            let (before, beforeSession) = (answer, session)
            guard try await appendFitting(uri), session.syncs[uri]?.phase == .committed else {
                (answer, session) = (before, beforeSession)
                split.append(uri)
                continue
            }
        }
        for uri in split {
            guard try await appendFitting(uri), session.syncs[uri]?.phase == .committed else { return }
        }
    }

    /// Appends the next part of a dataclass's changes that fits in the message.
    /// - Returns: false when no room was left for it.
    private mutating func appendFitting(_ uri: String) async throws -> Bool {
        guard let sync = session.syncs[uri] else { return false }
        var room = try sizer.room(in: OTAMessage(header: placeholderHeader, body: answer))
        while true {
            guard room > 1_024 else { return false }
            let (before, beforeSession) = (answer, session)
            let items = try await append(sync, room: room)
            // The sizes are estimates: the message as encoded decides. A single record
            // larger than the limit still goes, alone.
            let size = try sizer.bytes(of: OTAMessage(header: placeholderHeader, body: answer))
            if size <= sizer.limit || items <= 1 { return true }
            (answer, session) = (before, beforeSession)
            room -= size - sizer.limit + 1_024
        }
    }

    /// Appends the next `sync-changes` of `sync` (and its `sync-commit` when it is the last).
    /// - Returns: how many items it carries.
    private mutating func append(_ sync: DataclassSync, room: Int) async throws -> Int {
        var sync = sync
        let uri = sync.uri
        let device: OTAPushBatch.DeviceView
        if let known = deviceViews[uri] {
            device = known
        } else {
            device = try await OTAPushBatch.DeviceView.read(uri, peer: session.peer, from: store)
            deviceViews[uri] = device
        }
        let batch = try await OTAPushBatch.next(
            for: sync, device: device, store: store, node: session.node, sizer: sizer, room: room, now: server.clock.now())
        sync.pushCursor = batch.cursor
        let done = !batch.hasMore
        var params: [String: SyncValue] = [
            "uri": .string(uri), "itemtype": "records", "items": .dictionary(batch.items),
            "anchors": OTAAnchors(mode: sync.mode, nextServerAnchor: anchor(sync, at: batch.cursor)).value,
        ]
        if !done { params["more"] = true }
        let sequence = session.nextCommandSequence()
        answer.append(.command(OTACommand(name: "sync-changes", sequence: sequence, params: params, more: !done)))
        if done {
            answer.append(.command(OTACommand(
                name: "sync-commit", sequence: session.nextCommandSequence(),
                params: ["uri": .string(uri), "anchors": OTAAnchors(mode: .fast, nextServerAnchor: anchor(sync, at: batch.cursor)).value])))
            sync.phase = .committed
        }
        session.syncs[uri] = sync
        return batch.items.count
    }

    private var placeholderHeader: OTAHeader {
        OTAHeader(userid: session.account.rawValue, deviceid: session.deviceID, sequence: session.lastSent + 1, isFinal: false)
    }
}
