import SyncCore

/// What comes in to the device in a session: the server's answers to the
/// device's commands (negotiation, the mingle checkpoint, failures) and the
/// server's own commands (its changes, applied with their checkpoints; its
/// commit; `get deviceinfo`), each giving the answer the device sends back.
struct OTAClientIncoming {
    let client: OTAClient
    /// Items the server sent and the device applied.
    private(set) var receivedItems = 0
    /// Conflicts the device met: server versions of records with a pending change that conflict with it.
    private(set) var conflicts = 0
    /// Changes the server refused for good, by record key: the reason.
    private(set) var refused: [RecordKey: String] = [:]

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
    mutating func take(_ response: OTACommandResponse, syncs: inout [String: ClientDataclass]) async throws -> OTASyncMode? {
        guard let uri = response.uri, var sync = syncs[uri], let result = response.results.first else { return nil }
        defer { syncs[uri] = sync }
        switch (response.knownName, result.status) {
        case (.syncStart?, .ok):
            break
        case (.syncStart?, .negotiationFailed):
            let proposed = try response.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) }?.mode ?? .slow
            guard sync.renegotiations < 2 else {
                sync.failure = .ota(result, dataclass: uri)
                sync.phase = .failed
                break
            }
            sync.renegotiations += 1
            return proposed
        case (.syncChanges?, .notCompleted):
            break
        case (.syncChanges?, .commandNotProcessed) where sync.phase == .needsStart:
            break  // its sync-start failed; it starts again in the mode the server wants
        case (.syncChanges?, .ok), (.syncChanges?, .multiStatus):
            let anchor = try response.params["anchors"].map { value throws(OTAMessageError) in try OTAAnchors(value) }?.nextServerAnchor
            // S_MultiStatus: the statuses after the first name the items the server refused for good.
            let refusals = response.results.dropFirst().filter { !$0.status.isSuccess && $0.paramName == "items" && $0.paramKey != nil }
            try await refuse(
                Dictionary(refusals.map { ($0.paramKey!, $0.detail ?? $0.status.description) }, uniquingKeysWith: { first, _ in first }),
                in: &sync)
            sync.mingleAnswered = true
            if !sync.mingled { try await markMingled(&sync, serverAnchor: anchor) }
        default:
            if !result.status.isSuccess {
                sync.failure = sync.failure ?? .ota(result, dataclass: uri)
                sync.phase = .failed
            }
        }
        return nil
    }

    /// The server refused these items (LUID → its status) for good: their entries leave the journal
    /// and are reported; the device keeps its records as they are.
    private mutating func refuse(_ refusals: [String: String], in sync: inout ClientDataclass) async throws {
        guard !refusals.isEmpty else { return }
        let collection = CollectionID(sync.uri)
        try await store.transaction { tx in
            for luid in refusals.keys { try await tx.journal.remove(RecordKey(collection: collection, id: RecordID(luid))) }
        }
        for (luid, reason) in refusals {
            refused[RecordKey(collection: collection, id: RecordID(luid))] = reason
            sync.sentEntries[luid] = nil
            sync.sentRecords[luid] = nil
        }
        sync.sentLUIDs.removeAll { refusals[$0] != nil }
    }

    /// The mingle checkpoint: the device's changes the session sent are on the server.
    private func markMingled(_ sync: inout ClientDataclass, serverAnchor: String?) async throws {
        let (uri, sent, mode, sentRecords) = (sync.uri, sync.sentLUIDs, sync.mode, sync.sentRecords)
        try await store.transaction { tx in
            for (luid, record) in sentRecords { try await OTAClientState.setSynced(record, luid, uri, in: tx) }
            // A slow or reset sync's server knows exactly the records it was sent.
            var ids = OTAIDMap.device(dataclass: uri)
            if mode == .fast { try await ids.load(luids: sent, in: tx) } else { try await ids.removeAll(in: tx) }
            for luid in sent where ids.uuid(forLUID: luid) == nil { try await ids.set(luid: luid, uuid: "", in: tx) }
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
                    uri: uri, sync: sync, command: command, now: client.configuration.clock.now(), keepsSynced: client.configuration.itemType == .changes,
                    policy: client.configuration.conflictPolicy)
                if !sync.mingled {
                    // The server pushes only after its mingle: the device's changes are in.
                    try await markMingled(&sync, serverAnchor: nil)
                }
                let applied = try await apply.apply(in: store)
                sync.droppedForReset = sync.droppedForReset || sync.mode == .reset
                sync.phase = sync.phase == .failed ? .failed : .receiving
                receivedItems += applied.count
                conflicts += applied.conflicts
                // A server version came back for these: the journal judged them; the commit does not acknowledge them.
                for luid in applied.judged { sync.sentEntries[luid] = nil }
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
            let acknowledged = sync.mingleAnswered ? sync.sentEntries.values.map { $0 } : []
            try await store.transaction { tx in
                let token = anchors?.nextServerAnchor.map(SyncValue.string)
                try await tx.journal.prefetch(acknowledged.map(\.key))
                for entry in acknowledged {
                    // The server's mingle took the change and sent no other version back: it holds what was sent.
                    try await tx.journal.acknowledge(entry.key, sequence: entry.sequence, holding: ServerVersion(record: entry.local, token: token))
                }
                if let anchor = anchors?.nextServerAnchor { try await tx.setMetadata(anchor, OTAClientState.serverAnchor(uri)) }
                var device = try await tx.metadata(OTAClientState.deviceAnchor(uri)) ?? .fresh()
                device.count += 1
                try await tx.setMetadata(device, OTAClientState.deviceAnchor(uri))
                let next = anchors?.mode
                try await tx.setMetadata(next == .fast ? nil : next, OTAClientState.requestedMode(uri))
            }
            sync.phase = .committed
            sync.sentEntries = [:]
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
