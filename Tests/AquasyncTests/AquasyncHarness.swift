import Aquasync
import FoundationEssentials
import Synchronization
import SyncBinaryPlist
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncTesting
import SyncXMLPlist
import TestSupport


extension Date {
    /// The date `value` milliseconds after 1970, as Aquasync stamps `localTimestamp`.
    static func milliseconds(_ value: Int64) -> Date {
        Date(timeIntervalSince1970: Double(value) / 1000)
    }
}

/// A client middleware that runs a hook before each request reaches the server and can answer instead of it.
struct HookMiddleware: SyncClientMiddleware {
    let hook: @Sendable (SyncRequest) async throws -> SyncResponse?
    func intercept(
        _ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        if let answer = try await hook(request) { return answer }
        return try await next(request)
    }
}

/// Counts in a lock, for hooks.
final class Counter: Sendable {
    private let value = Mutex(0)
    @discardableResult func increment() -> Int { value.withLock { $0 += 1; return $0 } }
    var count: Int { value.withLock { $0 } }
}

/// One server on a memory store, reached in process or over HTTP, and clients on memory stores.
struct AquasyncHarness {
    let serverStore = MemoryStore()
    let account: AccountID = "ada"
    var models: [AquasyncModel]? = nil

    var conflictPolicy: any ConflictPolicy = AquasyncNewestWins()
    var validation: RecordValidation = .acceptAll

    var server: AquasyncServer {
        AquasyncServer(
            store: serverStore, codecs: TestCodec.all, models: models, pageSize: 50, conflictPolicy: conflictPolicy,
            validation: validation)
    }

    /// The server mounted at `/deltas`, behind `front` when there is one.
    func service(front: (any SyncServiceMiddleware)? = nil) -> ServiceRouter {
        ServiceRouter().mounting(front.map { server.with($0) } ?? server, at: "/deltas")
    }

    /// An in-process transport to the server (behind `front` when there is one) as `account`,
    /// for tests that only run in process.
    func loopback(front: (any SyncServiceMiddleware)? = nil) -> any SyncClientTransport {
        LoopbackTransport(service: service(front: front), authenticator: SingleAccountAuthenticator(account: account))
    }

    /// Knows `TransportRoute.ada` (basic, `ada` / `secret`) and `TransportRoute.bob` (the bearer token
    /// `token-of-bob`) as `TransportRoute.defaultAuthenticator` does, without its key derivation on
    /// each test's first request (tens of milliseconds in a debug build, for every test at once).
    static let authenticator = StaticAuthenticator(passwords: ["ada": "secret"], tokens: ["token-of-bob": "bob"])

    /// Runs `body` with a transport to the server by `route` — in process, or over HTTP on a free
    /// loopback port — that signs every request as Ada (`TransportRoute.ada`), or, with `credentials`
    /// nil, sends each request with its own.
    func withTransport(
        _ route: TransportRoute, credentials: Credentials? = TransportRoute.ada,
        _ body: (any SyncClientTransport) async throws -> Void
    ) async throws {
        try await route.withTransport(to: service(), authenticator: Self.authenticator, credentials: credentials, body)
    }

    /// A device on `store` whose local changes are stamped with `clock`'s wall time, pushing 20
    /// deltas a pack; in process unless given a `transport`.
    func client(
        _ codec: TestCodec, clock: TestClock = TestClock(), through transport: (any SyncClientTransport)? = nil,
        retry: RetryPolicy = .none, conflictPolicy: any ConflictPolicy = AquasyncNewestWins(),
        store: any SyncStore = MemoryStore()
    ) -> AquasyncClient {
        AquasyncClient(
            store: store, transport: transport ?? loopback(), codec: codec.codec,
            configuration: .init(retry: retry, clock: clock.wall, conflictPolicy: conflictPolicy, packSize: 20))
    }

    /// Sends a raw request to the server, in process.
    func send(_ request: SyncRequest) async throws -> SyncResponse {
        try await loopback().send(request)
    }
}

extension SyncRequest {
    static func pushJSON(_ pack: SyncValue) throws -> SyncRequest {
        SyncRequest(method: .post, path: "/deltas", contentType: "application/json", body: try JSONCodec().encode(pack))
    }
}
