import AsyncHTTPClient
import Foundation
import InMemoryLogging
import Logging
import NIOCore
import NIOHTTP1
import Prometheus
import ServiceLifecycle
import SyncCore
import SyncHTTPServer
import SyncTesting
import TestSupport
import Testing

/// `/health`, `/ready`, `/metrics`, request metrics and request ids of an in-process
/// ``HTTPSyncServer`` over real HTTP on loopback. The metrics go to a registry of the
/// test's own (``ServerObservability/metricsFactory``), never to the process-wide bootstrap.
@Suite("HTTP server observability: probes, metrics, request ids")
struct ObservabilityTests {
    static let ada = "Basic " + Data("ada:secret".utf8).base64EncodedString()

    /// A store whose every read and transaction fails, as a database that went away.
    struct UnreachableStore: SyncStore {
        func transaction<Result: Sendable>(
            for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
        ) async throws -> Result { throw StoreError(.unavailable, "connection refused") }
        func changes(for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int)
            async throws -> ChangeBatch
        { throw StoreError(.unavailable, "connection refused") }
        func latestPosition(for account: AccountID) async throws -> ChangePosition {
            throw StoreError(.unavailable, "connection refused")
        }
    }

    /// Logs one line per request through a logger of its own, as a stack does, and answers with the
    /// request id its context carries.
    struct LoggingService: SyncService {
        let logger: Logger
        func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
            logger.info("stack line")
            return SyncResponse(status: 200, contentType: "text/plain", body: Array((context.requestID ?? "none").utf8))
        }
    }

    /// Runs a server with `observability` and the service logging to `logs`, and calls `body` with its base URL.
    static func withServer<Result: Sendable>(
        observability: ServerObservability, logs: InMemoryLogHandler = InMemoryLogHandler(),
        _ body: (String) async throws -> Result
    ) async throws -> Result {
        var logger = Logger(label: "test.http") { _ in
            var handler = logs
            handler.metadataProvider = RequestID.metadataProvider
            return handler
        }
        logger.logLevel = .debug
        let service = ServiceRouter()
            .mounting(LoggingService(logger: logger), at: "/deltas")
            .mounting(LoggingService(logger: logger), at: "/custom")
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let server = HTTPSyncServer(
            service: service, authenticator: TransportRoute.defaultAuthenticator, logger: logger,
            onRunning: { port in
                continuation.yield(port)
                continuation.finish()
            }, observability: observability)
        let group = ServiceGroup(
            configuration: .init(services: [server], gracefulShutdownSignals: [], logger: Logger(label: "test.group")))
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next(), "the server did not start")
            do {
                let result = try await body("http://127.0.0.1:\(port)")
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }

    static func get(_ url: String, headers: [(String, String)] = []) async throws -> (HTTPClientResponse, String) {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (response, String(buffer: body))
    }

    /// The value of the sample `name{labels}` in a Prometheus text exposition, 0 when absent.
    static func sample(_ exposition: String, _ series: String) -> Double {
        for line in exposition.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1)) ?? .nan
        }
        return 0
    }

    @Test("/health is 200; /ready is 200 while the store reads and 503 when it fails; neither needs credentials")
    func probes() async throws {
        let healthy = ServerObservability(readiness: ServerObservability.storeReadiness(MemoryStore()))
        try await Self.withServer(observability: healthy) { base in
            let (health, healthBody) = try await Self.get(base + "/health")
            #expect(health.status == .ok && healthBody == "ok\n")
            #expect(try await Self.get(base + "/ready").0.status == .ok)
        }
        let failing = ServerObservability(readiness: ServerObservability.storeReadiness(UnreachableStore()))
        try await Self.withServer(observability: failing) { base in
            #expect(try await Self.get(base + "/health").0.status == .ok, "liveness does not depend on the store")
            let (ready, body) = try await Self.get(base + "/ready")
            #expect(ready.status == .serviceUnavailable)
            #expect(!body.contains("connection refused"), "the store's error stays in the server's log: \(body)")
        }
    }

    @Test("/metrics exposes the injected registry: requests by stack and status, durations, in flight; probes are not counted")
    func requestMetrics() async throws {
        let registry = PrometheusCollectorRegistry()
        let observability = ServerObservability(
            prometheus: registry, metricsFactory: PrometheusMetricsFactory(registry: registry),
            stacks: ServerObservability.standardStacks.merging(["/custom": "mine"]) { $1 })
        try await Self.withServer(observability: observability) { base in
            let auth = [("Authorization", Self.ada)]
            for _ in 0..<3 { #expect(try await Self.get(base + "/deltas/from:0", headers: auth).0.status == .ok) }
            #expect(try await Self.get(base + "/deltas/from:0").0.status == .unauthorized)
            #expect(try await Self.get(base + "/custom/x", headers: auth).0.status == .ok)
            #expect(try await Self.get(base + "/nowhere", headers: auth).0.status == .notFound)
            _ = try await Self.get(base + "/health")
            _ = try await Self.get(base + "/ready")

            let (response, text) = try await Self.get(base + "/metrics")
            #expect(response.status == .ok)
            #expect(response.headers["Content-Type"].first?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(Self.sample(text, #"anchorage_http_requests_total{stack="aquasync",status="200"}"#) == 3, "\(text)")
            #expect(Self.sample(text, #"anchorage_http_requests_total{stack="aquasync",status="401"}"#) == 1)
            #expect(Self.sample(text, #"anchorage_http_requests_total{stack="mine",status="200"}"#) == 1)
            #expect(Self.sample(text, #"anchorage_http_requests_total{stack="other",status="404"}"#) == 1)
            #expect(!text.contains("status=\"200\"} 6"), "probes are not requests")
            #expect(Self.sample(text, #"anchorage_http_request_duration_seconds_count{stack="aquasync"}"#) == 4)
            #expect(Self.sample(text, "anchorage_http_requests_in_flight") == 0)
        }
    }

    @Test("without a registry /metrics is not served: it goes to the service like any path, and needs credentials")
    func metricsAreOptIn() async throws {
        try await Self.withServer(observability: ServerObservability()) { base in
            let (response, _) = try await Self.get(base + "/metrics")
            #expect(response.status == .unauthorized)
        }
    }

    @Test("a sane X-Request-ID comes back and is on the request's log lines and the service's context; others are replaced")
    func requestIDs() async throws {
        let logs = InMemoryLogHandler()
        try await Self.withServer(observability: ServerObservability(), logs: logs) { base in
            let auth = ("Authorization", Self.ada)
            let (sent, body) = try await Self.get(base + "/deltas/x", headers: [auth, ("X-Request-ID", "client-id_1.2:3")])
            #expect(sent.headers["X-Request-ID"] == ["client-id_1.2:3"])
            #expect(body == "client-id_1.2:3", "the service's context carries the id")
            let lines = logs.entries.filter { $0.metadata["request.id"] == "client-id_1.2:3" }.map(\.message.description)
            #expect(lines.contains("stack line"), "the stack's own line: \(logs.entries)")
            #expect(lines.contains { $0.hasPrefix("GET /deltas/x 200") }, "the server's request line: \(logs.entries)")

            for insane in ["has space", String(repeating: "a", count: 129), "semi;colon"] {
                let (response, body) = try await Self.get(base + "/deltas/x", headers: [auth, ("X-Request-ID", insane)])
                let id = try #require(response.headers["X-Request-ID"].first)
                #expect(id != insane && UUID(uuidString: id) != nil && body == id, "\(insane) → \(id)")
            }
            let (unauthorized, _) = try await Self.get(base + "/deltas/x")
            let made = try #require(unauthorized.headers["X-Request-ID"].first, "a refused request gets an id too")
            #expect(logs.entries.contains { $0.metadata["request.id"].map { "\($0)" } == made && $0.message.description.contains("401") })
        }
    }
}
