import AppSync
import FoundationEssentials
import SyncCore
import SyncJSON
import SyncTesting
import Synchronization
import TestSupport

/// A wall clock the test moves by hand, in whole seconds.
final class StepClock: WallClock {
    private let seconds: Mutex<Double>
    init(_ start: Double = 1_700_000_000) { seconds = Mutex(start) }
    func now() -> Date { seconds.withLock { Date(timeIntervalSince1970: $0) } }
    func advance(_ by: Double = 1) { seconds.withLock { $0 += by } }
}

/// Counts requests by method, as a middleware.
final class RequestLog: SyncClientMiddleware, Sendable {
    private let entries = Mutex<[String]>([])
    var requests: [String] { entries.withLock { $0 } }
    func clear() { entries.withLock { $0 = [] } }
    func intercept(_ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse) async throws
        -> SyncResponse
    {
        entries.withLock { $0.append("\(request.method) \(request.pathWithoutQuery)") }
        return try await next(request)
    }
}

/// A wall clock `offset` seconds off another: a device whose clock is wrong.
struct SkewedClock: WallClock {
    let base: any WallClock
    let offset: Double
    func now() -> Date { base.now().addingTimeInterval(offset) }
}

/// A server on a memory store, reached in process or over HTTP, and clients on memory stores.
struct AppSyncHarness {
    static let booking = AppSyncObjectType("booking")
    /// A type without a primary key: two versions of a note can live side by side.
    static let note = AppSyncObjectType("note", primaryKey: [])
    let serverStore = MemoryStore()
    let account: AccountID = "ada"
    let clock = StepClock()
    /// The rule the server's uploads must pass.
    var validation = RecordValidation.acceptAll

    var server: AppSyncServer {
        AppSyncServer(store: serverStore, codecs: CodecSet([JSONCodec()]), types: [Self.booking, Self.note], validation: validation)
    }

    /// Retries at once, so faulty-network tests need no clock.
    static let retryAtOnce = RetryPolicy(maxAttempts: 3, initialDelay: .zero)

    func client(
        _ transport: any SyncClientTransport, conflictPolicy: any ConflictPolicy, retry: RetryPolicy = Self.retryAtOnce,
        sleeper: any Clock<Duration> = ContinuousClock(), store: any SyncStore = MemoryStore(), skew: Double = 0,
        types: [AppSyncObjectType] = [Self.booking]
    ) -> AppSyncClient {
        AppSyncClient(
            store: store, transport: transport, codec: JSONCodec(), types: types,
            configuration: .init(
                retry: retry, clock: SkewedClock(base: clock, offset: skew), sleeper: sleeper, conflictPolicy: conflictPolicy))
    }

    /// A device syncing notes that leaves conflicts to the application (`.askUser`).
    func noteDevice(_ transport: any SyncClientTransport, store: any SyncStore = MemoryStore()) -> AppSyncClient {
        client(transport, conflictPolicy: .askUser, store: store, types: [Self.note])
    }

    /// Lets every request in as `account`, on both routes.
    var authenticator: SingleAccountAuthenticator { SingleAccountAuthenticator(account: account) }

    /// The server mounted at `/rest`, behind `front` when there is one.
    func router(front: (any SyncServiceMiddleware)? = nil) -> ServiceRouter {
        ServiceRouter().mounting(front.map { server.with($0) } ?? server, at: "/rest")
    }

    /// An in-process transport to the server (behind `front` when there is one), for tests that only run in process.
    func loopback(front: (any SyncServiceMiddleware)? = nil) -> any SyncClientTransport {
        LoopbackTransport(service: router(front: front), authenticator: authenticator)
    }

    /// Runs `body` with a transport to the server (behind `front` when there is one) by `route`:
    /// in process, or over HTTP on a free loopback port.
    func withTransport<Result: Sendable>(
        _ route: TransportRoute, front: (any SyncServiceMiddleware)? = nil,
        _ body: (any SyncClientTransport) async throws -> Result
    ) async throws -> Result {
        try await route.withTransport(to: router(front: front), authenticator: authenticator, body)
    }

    /// The server's live objects of `type`, by guid, read in process whatever route the test's clients take.
    func serverObjects(_ type: String = "booking") async throws -> [String: AppSyncObject] {
        let response = try await loopback().send(SyncRequest(method: .get, path: "/rest/\(type)/list/0"))
        let items = try JSONCodec().decode(response.body)["objects"]?.arrayValue ?? []
        var objects: [String: AppSyncObject] = [:]
        for item in items {
            let object = try AppSyncObject(item, at: "")
            if !object.isDeleted { objects[object.guid] = object }
        }
        return objects
    }

    /// Saves an object on the server side, as a back-office edit.
    func serverSave(guid: String, fields: [String: SyncValue], deleted: Bool = false, type: String = "booking") async throws {
        let now = clock.now()
        try await server.save(
            AppSyncObject(guid: guid, fields: fields, isDeleted: deleted, timestampCreated: now, timestampLastUpdate: now),
            type: type, account: account)
    }
}
