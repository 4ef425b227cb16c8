import SyncCore

/// What comes in to the device in a session: the server's answers to the
/// device's commands (negotiation, the mingle checkpoint, failures) and the
/// server's own commands (its changes, applied with their checkpoints; its
/// commit; `get deviceinfo`), each giving the answer the device sends back.
struct OTAClientIncoming {
    let client: OTAClient
    /// Items the server sent and the device applied.
    private(set) var receivedItems = 0
    /// Conflicts the server sent for the user to resolve.
    private(set) var conflicts = 0

    init(client: OTAClient) {
        self.client = client
    }

    private var store: AccountStore { client.records.store.scoped(to: client.records.account) }

    /// The server answered the message that carried these id maps (per dataclass, the server ids
    /// mapped): they are no longer pending.
    func delivered(idMaps: [String: [String]], syncs: inout [String: ClientDataclass]) async throws {
        guard !idMaps.isEmpty else { return }
        try await store.transaction { tx in
            for (uri, uuids) in idMaps {
                var pending = try await tx.metadata(OTAClientState.pendingIDMap(uri)) ?? [:]
                for uuid in uuids { pending[uuid] = nil }
                try await tx.setMetadata(pending.isEmpty ? nil : pending, OTAClientState.pendingIDMap(uri))
            }
        }
        for uri in idMaps.keys { syncs[uri]?.pendingIDMap = [:] }
    }

    // MARK: The server's answers

    /// Takes the server's answer to one of the device's commands.
    /// - Returns: the mode to start the dataclass again in, after `E_NegotiationFailed`.
    func take(_ response: OTACommandResponse, syncs: inout [String: ClientDataclass]) async throws -> OTASyncMode? {
        guard let uri = response.uri, var sync = syncs[uri], let result = response.results.first else { return nil }
        defer { syncs[uri] = sync }
        switch (response.knownName, result.status) {
        case (.syncStart?, .ok):
            break
        case (.syncStart?, .negotiationFailed):
            let proposed = try response.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) }?.mode ?? .slow
            guard sync.renegotiations < 2 else {
                sync.failure = OTAClientError(result, dataclass: uri)
                sync.phase = .failed
                break
            }
            sync.renegotiations += 1
            return proposed
        case (.syncChanges?, .notCompleted):
            break
        case (.syncChanges?, .commandNotProcessed) where sync.phase == .needsStart:
            break  // its sync-start failed; it starts again in the mode the server wants
        case (.syncChanges?, .ok):
            let anchor = try response.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) }?.nextServerAnchor
            if !sync.mingled { try await markMingled(&sync, serverAnchor: anchor) }
        default:
            if !result.status.isSuccess {
                sync.failure = sync.failure ?? OTAClientError(result, dataclass: uri)
                sync.phase = .failed
            }
        }
        return nil
    }

    /// The mingle checkpoint: the device's changes up to the session's snapshot are on the server.
    private func markMingled(_ sync: inout ClientDataclass, serverAnchor: String?) async throws {
        let (uri, snapshot, sent, mode, sentRecords) = (sync.uri, sync.snapshot, sync.sentLUIDs, sync.mode, sync.sentRecords)
        let sentAll = sync.direction != .toDevice
        try await store.transaction { tx in
            if sentAll { try await tx.setMetadata(snapshot, OTAClientState.sentPosition(uri)) }
            for (luid, record) in sentRecords { try await OTAClientState.setSynced(record, luid, uri, in: tx) }
            var ids = mode == .fast ? try await tx.metadata(OTAClientState.ids(uri)) ?? [:] : [:]
            for luid in sent where ids[luid] == nil { ids[luid] = "" }
            try await tx.setMetadata(ids, OTAClientState.ids(uri))
            if let serverAnchor { try await tx.setMetadata(serverAnchor, OTAClientState.serverAnchor(uri)) }
        }
        sync.mingled = true
    }

    // MARK: The server's commands

    /// Runs one of the server's commands.
    /// - Returns: the device's answer, `urgent` when the server needs it now (a `get`, an error);
    ///   nil when the command gets none.
    mutating func run(_ command: OTACommand, syncs: inout [String: ClientDataclass]) async throws
        -> (response: OTACommandResponse, urgent: Bool)?
    {
        switch command.knownName {
        case .get? where command.uri.flatMap(OTAResource.init(uri:)) == .deviceInfo:
            return (OTACommandResponse(answering: command, .ok, params: ["value": .dictionary(client.configuration.deviceInfo)]), true)
        case .get?, .put?, .delete?:
            return (OTACommandResponse(answering: command, OTAResult(.notFound, "no such resource on this device", paramName: "uri")), true)
        case .syncChanges?:
            guard let uri = command.uri, var sync = syncs[uri] else {
                let result = OTAResult(.notSupported, "this device does not sync \(command.uri ?? "that")", paramName: "uri")
                return (OTACommandResponse(answering: command, result), false)
            }
            do {
                let apply = try OTADeviceApply(
                    uri: uri, sync: sync, command: command, now: client.records.clock.now(), keepsSynced: client.configuration.itemType == .changes)
                if !sync.mingled {
                    // The server pushes only after its mingle: the device's changes are in.
                    try await markMingled(&sync, serverAnchor: nil)
                }
                let applied = try await apply.apply(in: store)
                sync.droppedForReset = sync.droppedForReset || sync.mode == .reset
                sync.phase = sync.phase == .failed ? .failed : .receiving
                receivedItems += applied.count
                conflicts += applied.conflicts
                syncs[uri] = sync
                var params: [String: SyncValue] = [:]
                if !applied.newIDs.isEmpty { params["idmap"] = .dictionary(applied.newIDs.mapValues(SyncValue.string)) }
                return (OTACommandResponse(answering: command, .ok, params: params), false)
            } catch let error as OTAMessageError {
                return (OTACommandResponse(answering: command, error.result), true)
            }
        case .syncCommit?:
            guard let uri = command.uri, var sync = syncs[uri] else { return nil }
            let anchors = try command.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) }
            try await store.transaction { tx in
                if let anchor = anchors?.nextServerAnchor { try await tx.setMetadata(anchor, OTAClientState.serverAnchor(uri)) }
                var device = try await tx.metadata(OTAClientState.deviceAnchor(uri)) ?? .fresh()
                device.count += 1
                try await tx.setMetadata(device, OTAClientState.deviceAnchor(uri))
                let next = anchors?.mode
                try await tx.setMetadata(next == .fast ? nil : next, OTAClientState.requestedMode(uri))
            }
            sync.phase = .committed
            syncs[uri] = sync
            return (OTACommandResponse(answering: command, .ok), false)
        case .syncCancel?:
            if let uri = command.uri { syncs[uri]?.phase = .committed }
            return (OTACommandResponse(answering: command, .ok), false)
        case .syncStart?, nil:
            return (OTACommandResponse(answering: command, OTAResult(.unknownCommand, "unknown command '\(command.name)'")), true)
        }
    }
}
