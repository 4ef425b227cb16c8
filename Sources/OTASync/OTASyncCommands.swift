import SyncCore

/// The device's per-dataclass commands on the server, each moving its
/// dataclass through negotiate → pull → mingle: `sync-start` negotiates the
/// mode, `sync-changes` pulls the device's changes, `sync-commit` and
/// `sync-cancel` end the dataclass; once no dataclass is still negotiating or
/// pulling, ``mingleIfReady(_:)`` mingles them all. The push that follows is
/// ``OTAPush``'s.
struct OTASyncCommands {
    let server: OTAServer
    let store: AccountStore

    /// Runs one of the device's `sync-` commands against `session`.
    /// - Returns: the response.
    /// - Throws: ``OTAMessageError`` when the command is refused (the session is left as it was).
    func run(_ command: OTACommand, _ name: OTACommandName, in session: inout OTAServerSession) async throws
        -> OTACommandResponse
    {
        switch name {
        case .syncStart: try await start(command, in: &session)
        case .syncChanges: try await changes(command, in: &session)
        case .syncCommit: try commit(command, in: session)
        default: try cancel(command, in: &session)  // sync-cancel
        }
    }

    /// The dataclass a sync command names, refused when it is not synced here.
    private func dataclass(_ command: OTACommand) throws(OTAMessageError) -> String {
        let uri = try command.requiredURI()
        guard server.dataclasses.contains(uri) else {
            throw OTAMessageError(OTAResult(.notSupported, "dataclass \(uri) is not synced here", paramName: "uri"))
        }
        guard !server.disabledDataclasses.contains(uri) else {
            throw OTAMessageError(OTAResult(.notAllowed, "dataclass \(uri) is switched off", paramName: "uri"))
        }
        return uri
    }

    // MARK: Negotiate

    /// `sync-start`: accepts the mode the device proposes, or refuses it with the one the server wants.
    private func start(_ command: OTACommand, in session: inout OTAServerSession) async throws -> OTACommandResponse {
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
        if session.syncs[uri] == nil { session.order.append(uri) }
        if let proposed {
            sync.phase = .negotiationFailed
            sync.mode = proposed
            session.syncs[uri] = sync
            return OTACommandResponse(
                answering: command, OTAResult(.negotiationFailed, "\(uri) needs a \(proposed.rawValue) sync"),
                params: ["anchors": OTAAnchors(mode: proposed).value])
        }
        sync.mode = requested
        session.syncs[uri] = sync
        return OTACommandResponse(
            answering: command, .ok,
            params: ["anchors": OTAAnchors(mode: requested, direction: sync.direction, serverVersion: server.dataclassVersion).value])
    }

    // MARK: Pull

    /// `sync-changes`: keeps the device's items until the mingle (answered `S_NotCompleted`), and merges its id map.
    private func changes(_ command: OTACommand, in session: inout OTAServerSession) async throws -> OTACommandResponse {
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
        let idMap = try command.params["idmap"].map { value throws(OTAMessageError) in try OTAIDMapUpdate(value) }

        guard sync.phase == .pulling else {
            // After the pull phase only id maps may come (a deferred idmap, say).
            guard items.isEmpty else {
                throw OTAMessageError(OTAResult(.stateError, "\(uri) has finished its pull phase", paramName: "items"))
            }
            try await idMap?.merge(into: store, dataclass: uri, peer: session.peer)
            return OTACommandResponse(answering: command, .ok)
        }
        if sync.direction == .toDevice, !items.isEmpty {
            throw OTAMessageError(OTAResult(.notAllowed, "\(uri) syncs to the device only", paramName: "items"))
        }
        try await idMap?.merge(into: store, dataclass: uri, peer: session.peer)
        if sync.mode != .reset { sync.items += items }
        if !command.more { sync.phase = .pulled }
        session.syncs[uri] = sync
        return OTACommandResponse(answering: command, OTAResult(.notCompleted))
    }

    /// Whether `response` answers a dataclass's last `sync-changes` of its pull: the mingle turns
    /// it into `S_OK` with the first checkpoint (``mingled(_:in:)``) when it is in the same message.
    static func awaitsMingle(_ response: OTACommandResponse, of command: OTACommand) -> Bool {
        response.status == .notCompleted && !command.more
    }

    // MARK: Commit, cancel

    /// `sync-commit`: accepted only after the server's commit; its anchors are ignored.
    private func commit(_ command: OTACommand, in session: OTAServerSession) throws(OTAMessageError) -> OTACommandResponse {
        let uri = try dataclass(command)
        guard session.syncs[uri]?.phase == .committed else {
            return OTACommandResponse(answering: command, OTAResult(.stateError, "sync-commit before the server's commit", paramName: "uri"))
        }
        return OTACommandResponse(answering: command, .ok)
    }

    /// `sync-cancel`: before the mingle drops the pulled changes; after it stops the push where it is.
    private func cancel(_ command: OTACommand, in session: inout OTAServerSession) throws(OTAMessageError) -> OTACommandResponse {
        let uri = try dataclass(command)
        guard var sync = session.syncs[uri], sync.phase != .committed else {
            return OTACommandResponse(answering: command, OTAResult(.stateError, "nothing to cancel", paramName: "uri"))
        }
        sync.phase = .canceled
        sync.dropItems()
        session.syncs[uri] = sync
        return OTACommandResponse(answering: command, .ok)
    }

    // MARK: Mingle

    /// Mingles every pulled dataclass of the session in one transaction once none is still
    /// negotiating or pulling; they move on to the push.
    /// - Returns: whether it mingled.
    @discardableResult
    func mingleIfReady(_ session: inout OTAServerSession) async throws -> Bool {
        let ready = session.order.filter { session.syncs[$0]?.phase == .pulled }
        guard !ready.isEmpty, !session.syncs.values.contains(where: \.blocksMingle) else { return false }
        let tally = OTAConflictTally(server.conflictPolicy)
        var syncs: [DataclassSync] = []
        for uri in ready {
            var sync = session.syncs[uri]!
            // The items of the pull's earlier messages were kept in the store, those of this message here.
            sync.items = try await OTAServerSessionStore(store: server.store).storedItems(of: sync, session: session) + sync.items
            sync.generation = sync.mode == .fast ? sync.generation : session.newGeneration(for: uri)
            syncs.append(sync)
        }
        let mingler = OTAMingler(
            syncs: syncs, peer: session.peer, node: session.node, policy: tally,
            validation: server.validation, now: server.clock.now())
        let mingled = try await store.transaction { tx in
            tally.restart()
            return try await mingler.mingle(in: tx)
        }
        StackMetrics(stack: "ota").conflicts(tally.count)
        for var sync in mingled {
            sync.phase = .pushing
            sync.pushCursor = sync.mode == .fast ? sync.anchorPosition : .start
            sync.dropItems()
            session.syncs[sync.uri] = sync
        }
        return true
    }

    /// The answer to a dataclass's last `sync-changes` once it is mingled: `S_OK` with the first
    /// checkpoint. Nil when the dataclass was not mingled (canceled after its changes, say): the
    /// answer stays `S_NotCompleted`.
    static func mingled(_ response: OTACommandResponse, in session: OTAServerSession) -> OTACommandResponse? {
        guard let uri = response.uri, let sync = session.syncs[uri], sync.phase == .pushing else { return nil }
        var response = response
        // Items the server refused for good are named one by one after S_MultiStatus.
        response.results = sync.refusals.isEmpty
            ? [.ok]
            : [OTAResult(.multiStatus)]
                + sync.refusals.sorted { $0.key < $1.key }.map { OTAResult(.notAllowed, $0.value, paramName: "items", paramKey: $0.key) }
        response.params["anchors"] = OTAAnchors(mode: sync.mode, nextServerAnchor: sync.serverAnchor(at: sync.anchorPosition)).value
        return response
    }
}

extension DataclassSync {
    /// The server anchor of this sync's generation at `position`.
    func serverAnchor(at position: ChangePosition) -> String {
        var state = OTADeviceState()
        state.generation = generation
        return state.anchor(at: position)
    }
}
