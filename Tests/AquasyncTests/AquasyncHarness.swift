import Aquasync
import FoundationEssentials
import Synchronization
import SyncBinaryPlist
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncXMLPlist
import TestSupport


/// A wall clock the test sets.
final class SettableClock: WallClock {
    private let current: Mutex<Date>
    init(_ millisecondsSince1970: Int64 = 1_700_000_000_000) {
        current = Mutex(Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000))
    }
    func now() -> Date { current.withLock { $0 } }
    func set(_ milliseconds: Int64) { current.withLock { $0 = Date(timeIntervalSince1970: Double(milliseconds) / 1000) } }
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

/// One server on a memory store, and clients on memory stores that reach it in-process.
struct AquasyncHarness {
    let serverStore = MemoryStore()
    let account: AccountID = "ada"
    var models: [AquasyncModel]? = nil

    var server: AquasyncServer { AquasyncServer(store: serverStore, codecs: TestCodec.all, models: models, pageSize: 50) }

    var service: any SyncService { ServiceRouter().mounting(server, at: "/deltas") }

    /// A transport straight into the server, as `account`.
    var transport: any SyncClientTransport {
        LoopbackTransport(service: service, authenticator: SingleAccountAuthenticator(account: account))
    }

    func client(
        _ codec: TestCodec, clock: SettableClock = SettableClock(), through transport: (any SyncClientTransport)? = nil,
        retry: RetryPolicy = .none
    ) -> AquasyncClient {
        AquasyncClient(
            store: MemoryStore(), transport: transport ?? self.transport, codec: codec.codec, retry: retry,
            packSize: 20, clock: clock)
    }

    /// Sends a raw request to the server.
    func send(_ request: SyncRequest) async throws -> SyncResponse {
        try await transport.send(request)
    }
}

extension SyncRequest {
    static func pushJSON(_ pack: SyncValue) throws -> SyncRequest {
        SyncRequest(method: .post, path: "/deltas", contentType: "application/json", body: try JSONCodec().encode(pack))
    }
}
