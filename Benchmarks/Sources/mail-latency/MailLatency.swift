// mail-latency: how long a note saved on device A takes to be on device B, through Dovecot's push
// hook, the push server and B's data access daemon. Not a timed test: run it by hand, under a
// throwaway Dovecot,
//
//     ../scripts/with-dovecot.sh swift run -c release mail-latency [--notes 200]
//
// and write the figures in docs/mail.md with the machine they were taken on.
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
import Synchronization

@main
struct MailLatency {
    static func main() async throws {
        let arguments = CommandLine.arguments
        let count = arguments.firstIndex(of: "--notes").flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } ?? 200
        let environment = ProcessInfo.processInfo.environment
        guard let port = environment["ANCHORAGE_IMAP_PORT"].flatMap(Int.init), let directory = environment["ANCHORAGE_DOVECOT_DIR"] else {
            FileHandle.standardError.write(Data("mail-latency: run it under scripts/with-dovecot.sh\n".utf8))
            exit(64)
        }
        print("mail latency, \(ProcessInfo.processInfo.processorCount) cores, \(ProcessInfo.processInfo.operatingSystemVersionString)")

        var logger = Logger(label: "mail-latency")
        logger.logLevel = .error
        var configuration = PushServer.Configuration()
        configuration.mailServers = ["dovecot"]
        let push = PushServer(store: MemoryStore(), codecs: CodecSet([JSONCodec()]), configuration: configuration, logger: logger)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let http = HTTPSyncServer(
            service: ServiceRouter().mounting(push, at: "/push"),
            authenticator: StaticAuthenticator(passwords: ["ada": "secret", "dovecot": "secret"]),
            configuration: .init(maxConcurrentRequests: nil, loginThrottle: nil), logger: logger, onRunning: { portContinuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [PushHTTPServer(http, push: push)], logger: logger))
        let serverTask = Task { try await group.run() }
        var portIterator = ports.makeAsyncIterator()
        guard let pushPort = await portIterator.next() else { return }
        let server = URL(string: "http://127.0.0.1:\(pushPort)")!

        // A user of this run, whose changes Dovecot's hook posts to the push server.
        let user = "bench" + UUID().uuidString.prefix(8).lowercased()
        let line = "\(user):{PLAIN}secret::::::userdb_push_lua_url=\(server.absoluteString)/push/mail userdb_push_lua_user=dovecot userdb_push_lua_password=secret\n"
        // A users file of its own (see scripts/with-dovecot.sh), written whole and renamed into place.
        try Data(line.utf8).write(to: URL(fileURLWithPath: directory + "/users.d/" + user), options: .atomic)
        let account = IMAPAccount(host: "127.0.0.1", port: port, user: user, password: "secret", security: .none)

        let a = NotesMailbox(account: account, store: try SQLiteStore.inMemory(), device: "a")
        let b = NotesMailbox(account: account, store: try SQLiteStore.inMemory(), device: "b")
        let waiting = Mutex<(id: String, continuation: CheckedContinuation<ContinuousClock.Instant, Never>)?>(nil)
        let transport = HTTPClientTransport(baseURL: server).with(CredentialsMiddleware(.basic(username: "ada", password: "secret")))
        let daemon = MailDataAccessDaemon(
            account: account, pushServer: server, pushAccount: "ada", credentials: .basic(username: "ada", password: "secret"),
            deviceToken: "b", transport: transport, codec: JSONCodec(), pushMailboxes: ["Notes"]
        ) { _ in
            try await b.sync()
            guard let awaited = waiting.withLock({ $0 }), try await b.note(awaited.id) != nil else { return }
            let now = ContinuousClock.now
            let taken = waiting.withLock { value in
                defer { value = nil }
                return value
            }
            taken?.continuation.resume(returning: now)
        }
        let daemonTask = Task { try await daemon.run() }
        for await event in daemon.events { if case .registered = event { break } }
        _ = try await a.sync()

        var samples: [Duration] = []
        for index in 0..<count {
            let note = Note(title: "note \(index)", body: String(repeating: "text ", count: 40))
            let start = ContinuousClock.now
            let arrived = await withCheckedContinuation { continuation in
                waiting.withLock { $0 = (note.id, continuation) }
                Task {
                    try await a.save(note)
                    try await a.sync()
                }
            }
            samples.append(start.duration(to: arrived))
        }
        samples.sort()
        func percentile(_ p: Double) -> String {
            let value = samples[min(samples.count - 1, Int((Double(samples.count) * p).rounded(.up)) - 1)]
            return String(format: "%.1f ms", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1_000)
        }
        print("note saved on A → on B, n = \(count): p50 \(percentile(0.5)), p99 \(percentile(0.99)), max \(percentile(1))")
        daemonTask.cancel()
        await a.close()
        await b.close()
        await group.triggerGracefulShutdown()
        _ = try? await serverTask.value
    }
}
