import Foundation
import Logging
import ServiceLifecycle
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncJSON
import SyncIMAP
import SyncMail
import SyncMailPush
import SyncPush
import SyncSQLite
import SyncTesting
import Synchronization
import TestSupport
import Testing

/// A push server on a loopback port, in this process, that mail servers post to as `dovecot`.
final class MailPushServer: Sendable {
    let push: PushServer
    let url: URL
    private let task: Task<Void, any Error>

    private init(push: PushServer, url: URL, task: Task<Void, any Error>) {
        self.push = push
        self.url = url
        self.task = task
    }

    static func start(queueLength: Int = 64) async throws -> MailPushServer {
        let store = MemoryStore()
        var configuration = PushServer.Configuration(queueLength: queueLength)
        configuration.mailServers = ["dovecot"]
        let push = PushServer(store: store, codecs: CodecSet([JSONCodec()]), configuration: configuration)
        var logger = Logger(label: "mail-push-test")
        logger.logLevel = .critical
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let http = HTTPSyncServer(
            service: ServiceRouter().mounting(push, at: "/push"),
            authenticator: StaticAuthenticator(passwords: ["ada": "secret", "dovecot": "secret"]),
            configuration: .init(port: 0, loginThrottle: nil), logger: logger,
            onRunning: { port in
                portContinuation.yield(port)
                portContinuation.finish()
            })
        let group = ServiceGroup(configuration: .init(services: [PushHTTPServer(http, push: push)], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        let listening = await ports.first(where: { _ in true })
        if listening == nil { try await task.value }
        let port = try #require(listening, "the push server stopped before it listened")
        return MailPushServer(push: push, url: URL(string: "http://127.0.0.1:\(port)")!, task: task)
    }

    /// Where the Dovecot hook posts.
    var mailEndpoint: URL { url.appendingPathComponent("push/mail") }

    func stop() async {
        await push.hub.disconnectAll()
        task.cancel()
        _ = try? await task.value
    }
}

/// A device: its notes and its data access daemon, with a log of the daemon's events.
final class MailDevice: Sendable {
    let notes: NotesMailbox
    let daemon: MailDataAccessDaemon
    let log: EventLog<MailDataAccessDaemon.Event>
    private let task = Mutex<Task<Void, any Error>?>(nil)

    init(_ name: String, account: IMAPAccount, server: MailPushServer, pollMailboxes: [String] = [], sleeper: any Clock<Duration> = ContinuousClock(),
         store: (any SyncStore)? = nil) async throws {
        let notes = NotesMailbox(account: account, mailbox: "Notes", store: try store ?? SQLiteStore.inMemory(), device: name)
        let archive = NotesMailbox(account: account, mailbox: "Archive", store: try SQLiteStore.inMemory(), device: name)
        self.notes = notes
        let transport = HTTPClientTransport(baseURL: server.url).with(CredentialsMiddleware(.basic(username: "ada", password: "secret")))
        daemon = MailDataAccessDaemon(
            account: account, pushServer: server.url, pushAccount: "ada", credentials: .basic(username: "ada", password: "secret"),
            deviceToken: name, transport: transport, codec: JSONCodec(), pushMailboxes: ["Notes"], pollMailboxes: pollMailboxes,
            pollInterval: .seconds(60), sleeper: sleeper, pushConfiguration: .init(reconnect: RetryPolicy(maxAttempts: .max, initialDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: 0, maxElapsed: nil))
        ) { mailbox in
            _ = try await (mailbox == "Archive" ? archive : notes).sync()
        }
        log = await EventLog.recording(daemon.events)
        start()
    }

    /// Runs the daemon (again: its push client keeps the last notification number it had).
    func start() {
        let daemon = self.daemon
        task.withLock { $0 = Task { try await daemon.run() } }
    }

    func stop() async {
        guard let running = task.withLock({ $0 }) else { return }
        running.cancel()
        _ = try? await running.value
    }

    /// Waits until a sync of `mailbox` after event `index` leaves `condition` true.
    func waitUntil(_ what: String, mailbox: String = "Notes", from index: Int, _ condition: @escaping @Sendable () async throws -> Bool) async throws {
        var next = index
        while true {
            if try await condition() { return }
            let event = try await log.wait(for: what, from: next) { event in
                if case .synced(let synced, _) = event { return synced == mailbox }
                return false
            }
            next = try #require(await log.index(of: event, from: next)) + 1
        }
    }
}

@Suite struct MailPushTests {
    @Test func changesOnATravelToBThroughDovecotAndThePushServer() async throws {
        let server = try await MailPushServer.start()
        let account = try await TestDovecot.newAccount(push: server.mailEndpoint)
        let a = NotesMailbox(account: account, store: try SQLiteStore.inMemory(), device: "a")
        let b = try await MailDevice("b", account: account, server: server)
        try await b.log.wait(for: "B's registration") { if case .registered = $0 { true } else { false } }
        try await b.log.wait(for: "B's first sync") { if case .synced = $0 { true } else { false } }
        let imap = try await account.connect()
        let registration = try await imap.getMetadata("Notes", ["/private/vendor/vendor.anchorage/push"])
        #expect(registration[MailDataAccessDaemon.registrationEntry(deviceToken: "b")]?.hasPrefix("account=ada device=b token=") == true)

        // Added on A: B has it, with no sync called on B.
        var start = await b.log.count
        let note = Note(title: "Pushed", body: "one")
        try await a.save(note)
        _ = try await a.sync()
        try await b.waitUntil("the note on B", from: start) { try await b.notes.note(note.id)?.body == "one" }

        // Edited on A.
        start = await b.log.count
        var edited = note
        edited.body = "two"
        edited.modified = Date()
        try await a.save(edited)
        _ = try await a.sync()
        try await b.waitUntil("the edit on B", from: start) { try await b.notes.note(note.id)?.body == "two" }

        // A flag set by a plain IMAP client.
        start = await b.log.count
        try await imap.select("Notes")
        try await imap.uidStore(IMAPSequenceSet(try await imap.uidSearch("ALL")), "+FLAGS", flags: ["$Pinned"])
        try await b.waitUntil("the flag on B", from: start) { try await b.notes.note(note.id)?.flags == ["$Pinned"] }

        // An edit by a plain IMAP client: a new message, the old one expunged.
        start = await b.log.count
        let old = try await imap.uidSearch("ALL")
        try await imap.append("Notes", message: Array((
            "Subject: Pushed\r\nDate: Tue, 24 Nov 2026 20:00:00 +0000\r\nX-Universally-Unique-Identifier: \(note.id)\r\n\r\nthree\r\n").utf8))
        try await imap.uidStore(IMAPSequenceSet(old), "+FLAGS", flags: ["\\Deleted"])
        try await imap.uidExpunge(IMAPSequenceSet(old))
        try await b.waitUntil("the plain client's edit on B", from: start) { try await b.notes.note(note.id)?.body == "three" }

        // Deleted on A.
        start = await b.log.count
        _ = try await a.sync()
        try await a.delete(note.id)
        _ = try await a.sync()
        try await b.waitUntil("the delete on B", from: start) { try await b.notes.notes().isEmpty }

        await imap.logout()
        await b.stop()
        await server.stop()
    }

    /// Dovecot keeps METADATA entry names in lower case: devices whose names have capitals, dots,
    /// colons, dashes and underscores are still the ones notified.
    @Test func devicesNamedWithCapitalsAndPunctuationHearThroughDovecot() async throws {
        let server = try await MailPushServer.start()
        let account = try await TestDovecot.newAccount(push: server.mailEndpoint)
        let a = NotesMailbox(account: account, store: try SQLiteStore.inMemory(), device: "a")
        var devices: [MailDevice] = []
        for name in ["Phone-B.2", "Tablet:Home_1"] {
            let device = try await MailDevice(name, account: account, server: server)
            try await device.log.wait(for: "\(name)'s registration") { if case .registered = $0 { true } else { false } }
            try await device.log.wait(for: "\(name)'s first sync") { if case .synced = $0 { true } else { false } }
            devices.append(device)
        }
        var starts: [Int] = []
        for device in devices { starts.append(await device.log.count) }
        let note = Note(title: "To capitals", body: "one")
        try await a.save(note)
        _ = try await a.sync()
        for (device, start) in zip(devices, starts.prefix(devices.count)) {
            try await device.waitUntil("the note on the device", from: start) { try await device.notes.note(note.id)?.body == "one" }
        }
        #expect(await server.push.hub.queued(.init(account: "ada", device: "Phone-B.2")) >= 1)
        #expect(await server.push.hub.queued(.init(account: "ada", device: "phone-b.2")) == 0)
        for device in devices { await device.stop() }
        await server.stop()
    }

    @Test func retainedAfterAnOverflowResyncsAndAMailboxWithoutPushIsPolled() async throws {
        let server = try await MailPushServer.start(queueLength: 1)
        let account = try await TestDovecot.newAccount(push: server.mailEndpoint)
        let clock = TestClock()
        let b = try await MailDevice("b", account: account, server: server, pollMailboxes: ["Archive"], sleeper: clock)
        try await b.log.wait(for: "B's registration") { if case .registered = $0 { true } else { false } }
        try await b.log.wait(for: "B's first resync") { $0 == .synced(mailbox: "Notes", reason: .resync) }
        try await b.log.wait(for: "B's first Archive poll") { $0 == .synced(mailbox: "Archive", reason: .poll) }
        await b.stop()
        // While B is away, A makes more changes than B's queue holds: the server drops some.
        let a = NotesMailbox(account: account, store: try SQLiteStore.inMemory(), device: "a")
        for index in 0..<3 {
            try await a.save(Note(title: "n\(index)", body: "\(index)"))
            _ = try await a.sync()
        }
        #expect(await server.push.hub.queued(.init(account: "ada", device: "b")) == 1)
        // B comes back with the last notification number it had; told it missed some, it resyncs every push mailbox.
        let before = await b.log.count
        let seenBefore = await b.log.events.filter { $0 == .synced(mailbox: "Notes", reason: .resync) }.count
        b.start()
        try await b.log.wait(for: "a resync of Notes", from: before) { $0 == .synced(mailbox: "Notes", reason: .resync) }
        #expect(await b.log.events.filter { $0 == .synced(mailbox: "Notes", reason: .resync) }.count == seenBefore + 1)
        #expect(try await b.notes.notes().map(\.title) == ["n0", "n1", "n2"])
        let again = b

        // Archive has no push: a change there is synced at the next poll.
        try await again.log.wait(for: "the restarted daemon's first Archive poll", from: before) { $0 == .synced(mailbox: "Archive", reason: .poll) }
        await clock.waitForSleepers()
        let polls = await again.log.events.filter { $0 == .synced(mailbox: "Archive", reason: .poll) }.count
        let archiver = NotesMailbox(account: account, mailbox: "Archive", store: try SQLiteStore.inMemory(), device: "a")
        try await archiver.save(Note(title: "old", body: "archived"))
        _ = try await archiver.sync()
        let start = await again.log.count
        clock.advance(by: .seconds(60))
        try await again.log.wait(for: "a poll of Archive after the change", from: start) { $0 == .synced(mailbox: "Archive", reason: .poll) }
        #expect(await again.log.events.filter { $0 == .synced(mailbox: "Archive", reason: .poll) }.count == polls + 1)
        await again.stop()
        await server.stop()
    }
}
