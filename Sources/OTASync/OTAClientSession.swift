import SyncCore

/// One session of an ``OTAClient``: the state machine that takes each
/// dataclass from its start to its commit. What goes out is
/// ``OTAClientOutgoing``'s, what comes in ``OTAClientIncoming``'s, and the
/// message's trip to the server and back ``OTAClientSender``'s.
struct OTAClientSession {
    let client: OTAClient
    private var syncs: [String: ClientDataclass] = [:]
    private var outgoing: OTAClientOutgoing
    private var incoming: OTAClientIncoming
    private var sender: OTAClientSender

    init(client: OTAClient) {
        self.client = client
        for uri in client.dataclasses { syncs[uri] = ClientDataclass(uri: uri) }
        outgoing = OTAClientOutgoing(client: client)
        incoming = OTAClientIncoming(client: client)
        sender = OTAClientSender(client: client)
    }

    /// Runs the session until the server's side is final and the device has nothing more to send.
    /// - Returns: what travelled and how.
    mutating func run() async throws -> OTASyncReport {
        let store = client.records.store.scoped(to: client.records.account)
        for uri in client.dataclasses {
            // The application's answers first: what they keep goes up in this session.
            try await OTADeviceJournal(dataclass: uri, now: client.configuration.clock.now(), keepsSynced: client.configuration.itemType == .changes)
                .carryOutAnswers(in: store)
            try await outgoing.prepare(&syncs[uri]!, mode: nil)
        }
        var message = try await outgoing.nextMessage(&syncs)
        while true {
            let reply = try await exchange(message)
            let moreToSend = syncs.values.contains { $0.phase == .needsStart || $0.phase == .sending }
            if reply.header.isFinal && !moreToSend {
                // Answers that cannot wait for the next session go in one more message.
                if outgoing.mustAnswer || (!client.configuration.defersIDMap && outgoing.answersCarryIDMaps) {
                    try await exchange(try await outgoing.nextMessage(&syncs))
                }
                break
            }
            guard sender.roundTrips < 100_000 else { throw SyncClientError.ota(invalid: "the session does not end") }
            message = try await outgoing.nextMessage(&syncs)
        }
        if let failure = syncs.values.compactMap(\.failure).first { throw failure }
        var report = OTASyncReport(
            roundTrips: sender.roundTrips, sentItems: outgoing.sentItems, receivedItems: incoming.receivedItems,
            conflicts: incoming.conflicts)
        for (uri, sync) in syncs { report.modes[uri] = sync.mode }
        let synced = Set(client.dataclasses.map { CollectionID($0) })
        report.openConflicts = try await store.store.openConflicts(for: store.account).count {
            $0.awaitsAnswer && synced.contains($0.key.collection)
        }
        report.refused = incoming.refused
        return report
    }

    /// Sends one stateless command in a session of its own and checks its answer.
    /// - Throws: ``SyncCore/SyncClientError`` (``SyncCore/SyncClientError/Code/refused``) with the server's status when it refuses.
    mutating func runAlone(_ command: OTACommand) async throws {
        let reply = try await sender.send(outgoing.message(alone: command))
        guard let result = reply.responses.first(where: { $0.sequence == command.sequence })?.results.first else {
            throw SyncClientError.ota(invalid: "the server did not answer \(command.name)")
        }
        guard result.status.isSuccess else { throw SyncClientError.ota(result) }
    }

    /// Sends a message and takes the server's answer: its responses and its commands, in order.
    @discardableResult
    private mutating func exchange(_ message: OTAMessage) async throws -> OTAMessage {
        let reply = try await sender.send(message)
        try await incoming.delivered(idMaps: OTAClientOutgoing.idMaps(in: message), syncs: &syncs)
        for entry in reply.body {
            switch entry {
            case .response(let response):
                if let mode = try await incoming.take(response, syncs: &syncs), let uri = response.uri {
                    try await outgoing.prepare(&syncs[uri]!, mode: mode)  // E_NegotiationFailed: it starts again
                }
            case .command(let command):
                if let answer = try await incoming.run(command, syncs: &syncs) { outgoing.queue(answer.response, urgent: answer.urgent) }
            }
        }
        return reply
    }
}

/// Where one dataclass stands in a device's session.
struct ClientDataclass {
    enum Phase { case needsStart, sending, waiting, receiving, committed, failed }

    let uri: String
    var phase: Phase = .needsStart
    var mode: OTASyncMode = .fast
    /// Items still to send.
    var outgoing: [(id: String, item: OTAItem)] = []
    /// Every device id the session sends.
    var sentLUIDs: [String] = []
    /// The journal entries the session sends, by LUID, as read when it prepared them: acknowledged
    /// with the server's commit unless a server version of the record came back meanwhile.
    var sentEntries: [String: JournalEntry] = [:]
    /// Whether the server answered the dataclass's last `sync-changes` after its mingle (`S_OK`, or
    /// `S_MultiStatus` naming refused items); when it did not (the mingle waited for another dataclass),
    /// the entries stay pending and go again.
    var mingleAnswered = false
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
    var failure: SyncClientError?
}
