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

/// One server on a memory store, and clients on memory stores that reach it in-process.
struct AquasyncHarness {
    let serverStore = MemoryStore()
    let account: AccountID = "ada"
    var models: [AquasyncModel]? = nil

    var conflictPolicy: any ConflictPolicy = AquasyncNewestWins()

    var server: AquasyncServer {
        AquasyncServer(
            store: serverStore, codecs: TestCodec.all, models: models, pageSize: 50, conflictPolicy: conflictPolicy)
    }

    var service: any SyncService { ServiceRouter().mounting(server, at: "/deltas") }

    /// A transport straight into the server, as `account`.
    var transport: any SyncClientTransport {
        LoopbackTransport(service: service, authenticator: SingleAccountAuthenticator(account: account))
    }

    /// A device whose local changes are stamped with `clock`'s wall time, pushing 20 deltas a pack.
    func client(
        _ codec: TestCodec, clock: TestClock = TestClock(), through transport: (any SyncClientTransport)? = nil,
        retry: RetryPolicy = .none, conflictPolicy: any ConflictPolicy = AquasyncNewestWins()
    ) -> AquasyncClient {
        AquasyncClient(
            store: MemoryStore(), transport: transport ?? self.transport, codec: codec.codec,
            configuration: .init(retry: retry, clock: clock.wall, conflictPolicy: conflictPolicy, packSize: 20))
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
