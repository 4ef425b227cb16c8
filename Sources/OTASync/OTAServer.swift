import Foundation
public import SyncCore

/// The OTA server: `POST /ota`, sessions of messages, dataclasses synced in
/// parallel through negotiate → pull → mingle → push → commit.
///
/// ```swift
/// let server = OTAServer(
///     store: try SQLiteStore(path: "server.sqlite"), codecs: CodecSet([XMLPlistCodec(), BinaryPlistCodec(), JSONCodec()]),
///     dataclasses: ["com.apple.Contacts", "com.apple.Calendars"])
/// let router = ServiceRouter().mounting(server, at: "/ota")
/// ```
///
/// A session is kept by the `ota-session` cookie the first answer sets, and
/// lives in the store (``sessionTimeout`` after its last message), so any
/// server process on the same store continues it: several processes behind a
/// load balancer need nothing sticky. A repeated message is answered with the
/// answer kept for it, whichever process answered it first, and applied once.
/// What must outlive a session — id maps, anchors' generations, the device's
/// info and filters, conflicts waiting for the user — is in the store too, so
/// a session cut anywhere resumes from the device's latest checkpoint. The
/// header's `userid` must be the authenticated account.
/// See `docs/ota.md` for the protocol as built.
public struct OTAServer: SyncService {
    /// Where records and per-device state live.
    public let store: any SyncStore
    /// The codecs spoken: XML plists answer as `text/xml`, binary plists as `application/octet-stream`.
    public let codecs: CodecSet
    /// The dataclasses this server syncs (`com.apple.Contacts`, …); others get `E_NotSupported`.
    public let dataclasses: Set<String>
    /// Dataclasses that exist but are switched off for now: `E_NotAllowed`.
    public let disabledDataclasses: Set<String>
    /// Decides conflicts; the default makes the most recent sync win.
    public let conflictPolicy: any ConflictPolicy
    /// The rule for the records devices send: a record it refuses is not stored, and the answer
    /// to the device's `sync-changes` names it (`S_MultiStatus`, then `E_NotAllowed` with
    /// `param-name` = `items` and `param-key` = its id) while the other items go through.
    public let validation: RecordValidation
    /// Stamps the changes the server applies.
    public let clock: any WallClock
    /// The largest message the server sends or accepts, in encoded bytes.
    public let maxMessageBytes: Int
    /// How long a session lives after its last message.
    public let sessionTimeout: Duration
    /// The dataclass version the server speaks.
    public let dataclassVersion: String

    private let sessions: OTASessionLocks

    /// Makes a server.
    /// - Parameters:
    ///   - conflictPolicy: decides conflicts. ``NewestWinsPolicy`` (the default) makes the
    ///     most recent sync win, as the changes a sync brings are stamped when it
    ///     mingles them; a ``DeferredPolicy`` answering `.deferred` sends each
    ///     conflict to the device for the user to resolve.
    ///   - validation: the rule for the records devices send (``SyncCore/RecordValidation/acceptAll`` by default);
    ///     it sees a record's fields without its entity, and a deletion as a tombstone.
    public init(
        store: any SyncStore, codecs: CodecSet, dataclasses: Set<String>, disabledDataclasses: Set<String> = [],
        conflictPolicy: any ConflictPolicy = NewestWinsPolicy(), validation: RecordValidation = .acceptAll,
        clock: any WallClock = SystemWallClock(),
        maxMessageBytes: Int = 1 << 20, sessionTimeout: Duration = .seconds(30 * 60), dataclassVersion: String = "1.0"
    ) {
        self.store = store
        self.codecs = codecs
        self.dataclasses = dataclasses
        self.disabledDataclasses = disabledDataclasses
        self.conflictPolicy = conflictPolicy
        self.validation = validation
        self.clock = clock
        self.maxMessageBytes = max(4_096, maxMessageBytes)
        self.sessionTimeout = sessionTimeout
        self.dataclassVersion = dataclassVersion
        self.sessions = OTASessionLocks()
    }

    /// Answers one message.
    public func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        guard request.method == .post else { throw SyncServiceError.methodNotAllowed("OTA messages are POSTed") }
        let (input, output) = try codecs.negotiate(contentType: request.contentType, accept: request.accept)
        let contentType = OTAMediaType.answer(for: output)
        let sizer = OTAMessageSizer(codec: output, limit: maxMessageBytes)

        func reply(_ message: OTAMessage, session: String?) throws -> SyncResponse {
            SyncResponse(status: 200, contentType: contentType, session: session, body: try output.encode(message.value))
        }
        func refusal(_ result: OTAResult, header: OTAHeader?) throws -> SyncResponse {
            let header = OTAHeader(
                userid: header?.userid ?? context.account.rawValue, deviceid: header?.deviceid ?? "", sequence: 1,
                isFinal: true, result: [result])
            return try reply(OTAMessage(header: header), session: request.session)
        }

        guard request.body.count <= maxMessageBytes else {
            return try refusal(OTAResult(.limitExceeded, "a message may be at most \(maxMessageBytes) bytes"), header: nil)
        }
        let message: OTAMessage
        do {
            message = try OTAMessage(try input.decode(request.body))
        } catch let error as OTAMessageError {
            return try refusal(error.result, header: nil)
        } catch let error as CodecError {
            return try refusal(OTAResult(.badRequest, "the message cannot be read: \(error)"), header: nil)
        }
        guard message.header.version == OTAHeader.currentVersion else {
            return try refusal(
                OTAResult(.versionNotSupported, "protocol version \(OTAHeader.currentVersion) only", paramName: "version"),
                header: message.header)
        }
        guard message.header.userid == context.account.rawValue else {
            return try refusal(
                OTAResult(.notAllowed, "userid must be the authenticated account", paramName: "userid"),
                header: message.header)
        }

        let now = clock.now()
        let expiredBefore = now.addingTimeInterval(-sessionTimeout.seconds)
        let sessionStore = OTAServerSessionStore(store: store)
        let newSessionID = UUID().uuidString
        // A cookie that is no session id the server makes names no session (and no key in the store).
        let cookie = request.session.flatMap { OTAServerSessionStore.isSessionID($0) ? $0 : nil }
        return try await sessions.withLock(cookie ?? newSessionID) {
            let stored = try await cookie.asyncMap {
                try await sessionStore.load($0, account: context.account, expiredBefore: expiredBefore)
            } ?? nil
            guard stored != nil || message.header.sequence == 1 else {
                return try refusal(
                    OTAResult(.stateError, "unknown or expired session: start a new one with message 1"), header: message.header)
            }
            // Message 1 without a session the store knows starts a new one.
            let session =
                stored
                ?? OTAServerSession(id: newSessionID, account: context.account, deviceID: message.header.deviceid, now: now)
            guard session.deviceID == message.header.deviceid else {
                return try refusal(
                    OTAResult(.notAllowed, "this session belongs to another device", paramName: "deviceid"), header: message.header)
            }
            let sequence = message.header.sequence
            func keptAnswer() async throws -> SyncResponse {
                if let kept = try await sessionStore.reply(sequence, session: session) { return kept }
                return try refusal(
                    OTAResult(.badRequest, "message \(sequence) was processed and its answer is no longer kept"),
                    header: message.header)
            }
            if sequence <= session.lastReceived { return try await keptAnswer() }
            guard sequence == session.lastReceived + 1 else {
                return try refusal(
                    OTAResult(.badRequest, "message sequence gap: expected \(session.lastReceived + 1), got \(sequence)"),
                    header: message.header)
            }
            var processor = OTAMessageProcessor(server: self, session: session, sizer: sizer)
            let answer: OTAMessage
            do {
                answer = try await metrics.timing("message") { try await processor.process(message) }
            } catch is OTAServerSessionStore.Superseded {
                return try await keptAnswer()
            } catch let error as OTAMessageError {
                return try refusal(error.result, header: message.header)
            } catch let error as StoreError where error.code == .quotaExceeded {
                // The transaction rolled back: nothing of the message was stored.
                return try refusal(OTAResult(.limitExceeded, error.message), header: message.header)
            }
            var next = processor.session
            next.lastReceived = sequence
            next.lastActivity = now
            next.isFinished = answer.header.isFinal
            let response = try reply(answer, session: session.id)
            switch try await sessionStore.commit(
                next, after: stored, reply: response, sequence: sequence, expiredBefore: expiredBefore)
            {
            case .kept:
                metrics.received(Self.itemCount(in: message))
                metrics.sent(Self.itemCount(in: answer))
                return response
            case .superseded:
                // Another process answered this message meanwhile: its answer is the one kept.
                return try await keptAnswer()
            }
        }
    }

    /// Records received and sent, conflicts and sync durations, with `stack="ota"`.
    private let metrics = StackMetrics(stack: "ota")

    /// The records a message carries: the items of its `sync-changes` commands.
    static func itemCount(in message: OTAMessage) -> Int {
        message.commands.reduce(0) { total, command in
            guard command.name == OTACommandName.syncChanges.rawValue, case .dictionary(let items)? = command.params["items"]
            else { return total }
            return total + items.count
        }
    }

    /// Makes the next sync of `dataclass` between `device` and `account` a reset:
    /// the device drops its records of the dataclass and takes the server's.
    public func requestReset(_ dataclass: String, account: AccountID, device: String) async throws {
        try await store.transaction(for: account) { tx in
            let peer = OTADeviceState.peer(device)
            var state = OTADeviceState(try await tx.metadata(OTADeviceState.key(dataclass), for: peer))
            state.requestedMode = .reset
            try await tx.setMetadata(state.value, OTADeviceState.key(dataclass), for: peer)
        }
    }

    /// The device info a device last sent (`put deviceinfo` or the answer to the server's `get`).
    public func deviceInfo(account: AccountID, device: String) async throws -> SyncValue? {
        try await store.transaction(for: account) { tx in
            try await tx.metadata(OTADeviceState.deviceInfoKey, for: OTADeviceState.peer(device))
        }
    }
}

/// The media types OTA answers in: the patent's for the plists, the codec's own for the others.
enum OTAMediaType {
    static func answer(for codec: any SyncCodec) -> String {
        switch codec.primaryMediaType {
        case "application/x-plist": "text/xml"
        case "application/x-bplist": "application/octet-stream"
        default: codec.primaryMediaType
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// One message at a time per session in this process; the sessions themselves are in the store
/// (``OTAServerSessionStore``), where a transaction keeps one answer per message across processes.
final class OTASessionLocks: Sendable {
    private let locks = KeyedLocks<String>()

    /// Runs `body` while no other message of session `id` is processed in this process.
    func withLock<Result: Sendable>(_ id: String, _ body: () async throws -> Result) async throws -> Result {
        await locks.acquire(id)
        defer { locks.release(id) }
        return try await body()
    }
}
