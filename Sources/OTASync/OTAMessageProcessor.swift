import SyncCore

/// Processes one device message against a session, phase by phase, and
/// builds the answer: the device's command responses first (id maps,
/// device info), then its commands in order — `get`/`put`/`delete`
/// (``OTAResources``) and the `sync-` commands (``OTASyncCommands``) — then
/// the mingle, the server's `get deviceinfo` on a first sync, and the push
/// (``OTAPush``), all into an ``OTAAnswerBuilder``.
struct OTAMessageProcessor {
    let server: OTAServer
    private(set) var session: OTAServerSession
    private var answer: OTAAnswerBuilder
    /// Answers to the last `sync-changes` of a pull (by body index) that the mingle turns into `S_OK`.
    private var awaitingMingle: [Int] = []

    init(server: OTAServer, session: OTAServerSession, sizer: OTAMessageSizer) {
        self.server = server
        self.session = session
        answer = OTAAnswerBuilder(
            sizer: sizer,
            header: OTAHeader(
                userid: session.account.rawValue, deviceid: session.deviceID, sequence: session.lastSent + 1, isFinal: false))
    }

    private var store: AccountStore { server.store.scoped(to: session.account) }
    private var resources: OTAResources { OTAResources(store: store, peer: session.peer, dataclasses: server.dataclasses) }
    private var syncCommands: OTASyncCommands { OTASyncCommands(server: server, store: store) }

    /// - Throws: ``OTAMessageError`` when the message cannot be processed at all (nothing was applied).
    mutating func process(_ message: OTAMessage) async throws -> OTAMessage {
        try OTAIDMapUpdate.validate(message.responses, dataclasses: server.dataclasses)
        for response in message.responses { try await take(response) }
        var failedFamilies: Set<String> = []
        for command in message.commands {
            let family = command.name.hasPrefix(OTACommandName.syncPrefix) ? command.uri ?? "" : nil
            if let family, failedFamilies.contains(family) {
                answer.append(.response(OTACommandResponse(
                    answering: command, OTAResult(.commandNotProcessed, "an earlier command for \(command.uri ?? "this dataclass") failed"))))
                continue
            }
            let response: OTACommandResponse
            do {
                response = try await run(command)
            } catch let error as OTAMessageError {
                response = OTACommandResponse(answering: command, error.result)
            }
            let index = answer.append(.response(response))
            if OTASyncCommands.awaitsMingle(response, of: command) { awaitingMingle.append(index) }
            if let family, response.status?.isSuccess != true { failedFamilies.insert(family) }
        }
        if try await syncCommands.mingleIfReady(&session) { answerMingled() }
        if let request = try await resources.deviceInfoRequest(in: &session) { answer.append(.command(request)) }
        var push = OTAPush(store: store, session: session, sizer: answer.sizer, now: server.clock.now())
        try await push.run(&session, into: &answer)
        session.lastSent += 1
        let isFinal = session.syncs.values.allSatisfy { $0.phase == .committed || $0.phase == .canceled }
        var header = answer.header
        header.isFinal = isFinal
        return OTAMessage(header: header, body: answer.body)
    }

    /// Takes one of the device's command responses: an id map, or its device info.
    private func take(_ response: OTACommandResponse) async throws {
        switch response.knownName {
        case .syncChanges?:
            if let uri = response.uri, let idmap = response.params["idmap"] {
                try await OTAIDMapUpdate(idmap).merge(into: store, dataclass: uri, peer: session.peer)
            }
        case .get?:
            try await resources.take(response)
        default:
            break
        }
    }

    private mutating func run(_ command: OTACommand) async throws -> OTACommandResponse {
        switch command.knownName {
        case let name? where name == .get || name == .put || name == .delete:
            try await resources.run(command, name)
        case let name?:
            try await syncCommands.run(command, name, in: &session)
        case nil:
            OTACommandResponse(answering: command, OTAResult(.unknownCommand, "unknown command '\(command.name)'"))
        }
    }

    /// After the mingle, the answers to the pulls it took say `S_OK` with the first checkpoint.
    private mutating func answerMingled() {
        for index in awaitingMingle {
            guard case .response(let response) = answer.body[index],
                let mingled = OTASyncCommands.mingled(response, in: session)
            else { continue }
            answer.replace(at: index, with: .response(mingled))
        }
    }
}
