import NotesStack
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// A notes server on a memory store, devices on memory stores of their own,
/// and one clock for everyone's wall time: it moves only when the test moves it.
struct NotesHarness {
    let serverStore = MemoryStore()
    let clock = TestClock()
    /// The server's policy: it decides only races (a change pushed between another device's pull and push).
    let serverPolicy: any ConflictPolicy

    init(serverPolicy: any ConflictPolicy = NotesMergePolicy()) {
        self.serverPolicy = serverPolicy
    }

    /// The server, mounted at `/notes`.
    var router: ServiceRouter {
        ServiceRouter().mounting(
            NotesServer(store: serverStore, codecs: CodecSet([JSONCodec()]), conflictPolicy: serverPolicy), at: "/notes")
    }

    /// Runs `body` with a transport to the server as Ada (`TransportRoute.ada`), by `route`:
    /// in process, or over HTTP on a free loopback port.
    func withTransport<Result: Sendable>(
        _ route: TransportRoute, _ body: (any SyncClientTransport) async throws -> Result
    ) async throws -> Result {
        try await route.withTransport(to: router, credentials: TransportRoute.ada, body)
    }

    /// An in-process transport to the server, sending `credentials` (Ada's by default) with every request.
    func loopback(as credentials: Credentials = TransportRoute.ada) -> any SyncClientTransport {
        LoopbackTransport(service: router, authenticator: TransportRoute.defaultAuthenticator)
            .with(CredentialsMiddleware(credentials))
    }

    /// Runs `body` with two devices, `phone` and `laptop`, reached by `route`, that both hold the
    /// note `Shared` the phone made with `text`, and its id. The laptop decides conflicts with `laptopPolicy`.
    func withTwoDevices(
        _ route: TransportRoute, sharing text: String, laptopPolicy: any ConflictPolicy = NotesMergePolicy(),
        _ body: (NotesClient, NotesClient, String) async throws -> Void
    ) async throws {
        try await withTransport(route) { transport in
            let phone = device("phone", transport)
            let laptop = device("laptop", transport, policy: laptopPolicy)
            let id = try await phone.save(title: "Shared", text: text)
            try await phone.sync()
            try await laptop.sync()
            try await body(phone, laptop, id)
        }
    }

    /// A device retrying at once (no waits in tests) and exactly three times (no time bound: a loaded
    /// machine must not cut the retries short), deciding conflicts with `policy`, on `store` (an empty one
    /// by default), pushing `pushSize` changes at most in one push.
    func device(
        _ name: String, _ transport: any SyncClientTransport, policy: any ConflictPolicy = NotesMergePolicy(),
        store: any SyncStore = MemoryStore(), pushSize: Int = 100
    ) -> NotesClient {
        var configuration = NotesClient.Configuration(conflictPolicy: policy, pushSize: pushSize)
        configuration.retry = RetryPolicy(maxAttempts: 3, initialDelay: .zero, maxElapsed: nil)  // a shared setting, by name
        configuration.clock = clock.wall
        return NotesClient(store: store, device: name, transport: transport, codec: JSONCodec(), configuration: configuration)
    }

    /// Moves everyone's wall time on by a second, so the next change is newer.
    func tick() { clock.advance(by: .seconds(1)) }
}

extension NotesClient {
    /// The notes whose changes wait in the journal.
    func pendingKeys() async throws -> [RecordKey] {
        try await store.transaction(for: account) { tx in try await tx.journal.pendingKeys(in: ["notes"]) }
    }
}
