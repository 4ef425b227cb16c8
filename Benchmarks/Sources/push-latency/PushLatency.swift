// push-latency: how long a change on device A takes to be applied on device B through push,
// and what 1,000 connected devices cost one server. Not a timed test: run it by hand,
//
//     swift run -c release push-latency                          # SQLite, in this process
//     swift run -c release push-latency --postgres postgres://USER@HOST:PORT/DB --anchorage PATH
//
// and write the figures in docs/push.md with the machine they were taken on.
import Aquasync
import BenchmarkServers
import Foundation
import Logging
import ServiceLifecycle
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncJSON
import SyncPush
import SyncSQLite

@main
struct PushLatency {
    static func main() async throws {
        let arguments = CommandLine.arguments
        func value(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        let changes = value("--changes").flatMap(Int.init) ?? 1_000
        let devices = value("--devices").flatMap(Int.init) ?? 1_000
        print("push latency, \(ProcessInfo.processInfo.processorCount) cores, \(ProcessInfo.processInfo.operatingSystemVersionString)")

        let store = try SQLiteStore(path: NSTemporaryDirectory() + "push-latency-\(UUID().uuidString).sqlite")
        try await withServer(store: store) { url in
            report("SQLite, one server", try await latencies(writer: url, reader: url, changes: changes))
            try await fanOut(url: url, devices: devices, store: store)
        }
        if let postgres = value("--postgres"), let anchorage = value("--anchorage") {
            let servers = try (0..<2).map { _ in
                try ServerProcess(
                    anchorage: anchorage, store: postgres, accounts: ["bench"],
                    folder: NSTemporaryDirectory() + "push-latency-\(UUID().uuidString)")
            }
            defer { for server in servers { server.stop() } }
            report("PostgreSQL, two server processes", try await latencies(writer: servers[0].url, reader: servers[1].url, changes: changes, account: "bench"))
        }
    }

    static let authenticator = StaticAuthenticator(passwords: ["ada": "secret"])

    /// Runs an in-process server with Aquasync and push on `store` while `body` runs.
    static func withServer(store: SQLiteStore, _ body: @Sendable (URL) async throws -> Void) async throws {
        var logger = Logger(label: "push-latency")
        logger.logLevel = .error
        let push = PushServer(store: store, codecs: CodecSet([JSONCodec()]), logger: logger)
        let router = ServiceRouter()
            .mounting(AquasyncServer(store: store, codecs: CodecSet([JSONCodec()])), at: "/deltas")
            .mounting(push, at: "/push").with(push.writerMiddleware)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let http = HTTPSyncServer(
            service: router, authenticator: authenticator,
            configuration: .init(maxConcurrentRequests: nil, loginThrottle: nil), logger: logger,
            onRunning: { portContinuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [PushHTTPServer(http, push: push)], logger: logger))
        let task = Task { try await group.run() }
        guard let port = await ports.first(where: { _ in true }) else { return }
        try await body(URL(string: "http://127.0.0.1:\(port)")!)
        await group.triggerGracefulShutdown()
        try await task.value
    }

    /// An Aquasync device of `account` that names itself `token`.
    static func device(_ url: URL, token: String, account: String) -> AquasyncClient {
        let transport = HTTPClientTransport(baseURL: url)
            .with(CredentialsMiddleware(.basic(username: account, password: "secret")))
            .with(PushDeviceMiddleware(deviceToken: token))
        return AquasyncClient(store: MemoryStore(), transport: transport, codec: JSONCodec())
    }

    /// A writes `changes` records one at a time through `writer`; B, whose push client listens on `reader`,
    /// applies each. Returns each change's time from A's sync to B holding it.
    static func latencies(writer: URL, reader: URL, changes: Int, account: String = "ada") async throws -> [Duration] {
        let a = device(writer, token: "bench-a", account: account)
        let b = device(reader, token: "bench-b", account: account)
        let (applied, appliedContinuation) = AsyncStream.makeStream(of: Int.self)
        let push = PushClient(
            server: reader, credentials: .basic(username: account, password: "secret"), deviceToken: "bench-b",
            collections: ["aquasync/Contact"],
            transport: HTTPClientTransport(baseURL: reader).with(CredentialsMiddleware(.basic(username: account, password: "secret"))),
            codec: JSONCodec()
        ) { _ in
            appliedContinuation.yield(try await b.sync().pulled)
        }
        let run = Task { try await push.run() }
        defer { run.cancel() }
        var iterator = applied.makeAsyncIterator()
        _ = await iterator.next()  // the first connection's resync
        var pulled = 0
        var results: [Duration] = []
        let clock = ContinuousClock()
        for index in 0..<changes {
            _ = try await a.save("Contact", fields: ["name": .string("contact \(index)")])
            let began = clock.now
            _ = try await a.sync()
            while pulled < index + 1, let count = await iterator.next() { pulled += count }
            results.append(began.duration(to: clock.now))
        }
        return results
    }

    /// Connects `devices` push clients, then times one commit's notification reaching all of them.
    static func fanOut(url: URL, devices: Int, store: SQLiteStore) async throws {
        let before = residentBytes()
        let (heard, heardContinuation) = AsyncStream.makeStream(of: Void.self)
        var clients: [PushClient] = []
        var runs: [Task<Void, any Error>] = []
        for index in 0..<devices {
            let client = PushClient(
                server: url, credentials: .basic(username: "ada", password: "secret"), deviceToken: "fan-\(index)",
                collections: ["fan/out"],
                transport: HTTPClientTransport(baseURL: url).with(CredentialsMiddleware(.basic(username: "ada", password: "secret"))),
                codec: JSONCodec()
            ) { _ in heardContinuation.yield() }
            clients.append(client)
            runs.append(Task { try await client.run() })
        }
        defer { for run in runs { run.cancel() } }
        var iterator = heard.makeAsyncIterator()
        for _ in 0..<devices { _ = await iterator.next() }  // each first connection's resync
        let connected = residentBytes()
        let clock = ContinuousClock()
        let began = clock.now
        try await store.transaction(for: "ada") { tx in
            try await tx.put(SyncRecord(collection: "fan/out", id: "one", fields: ["n": 1], version: RecordVersion(modifiedAt: Date(), node: "bench")))
        }
        for _ in 0..<devices { _ = await iterator.next() }
        let elapsed = began.duration(to: clock.now)
        print("fan-out: \(devices) devices connected, one commit notified all in \(milliseconds(elapsed)) ms; "
            + "memory per connection (server and client in this process) \((connected - before) / max(1, devices) / 1024) KiB")
    }

    static func report(_ name: String, _ latencies: [Duration]) {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return }
        func percentile(_ p: Double) -> Duration { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        print("\(name): \(sorted.count) changes A → B: p50 \(milliseconds(percentile(0.5))) ms, p99 \(milliseconds(percentile(0.99))) ms, max \(milliseconds(sorted.last!)) ms")
    }

    static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15)
    }

    /// This process's resident memory, from /proc/self/statm.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * 4_096 : 0
    }
}
