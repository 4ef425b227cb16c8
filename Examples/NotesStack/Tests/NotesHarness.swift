import NotesStack
import SyncCore
import SyncHTTP
import SyncJSON
import SyncTesting
import Testing

/// How the devices reach the server.
enum Route: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// In process, through `LoopbackTransport`.
    case loopback
    /// Over real HTTP: `HTTPSyncServer` on a free loopback port, `HTTPClientTransport`.
    case http

    var testDescription: String { rawValue }
}

/// A notes server on a memory store, devices on memory stores of their own,
/// and one clock for everyone's wall time: it moves only when the test moves it.
struct NotesHarness {
    let serverStore = MemoryStore()
    let clock = TestClock()
    let policy: any ConflictPolicy

    init(policy: any ConflictPolicy = NotesMergePolicy()) {
        self.policy = policy
    }

    static let authenticator = StaticAuthenticator(passwords: ["ada": "secret"])
    static let ada = CredentialsMiddleware(.basic(username: "ada", password: "secret"))

    /// The server, mounted at `/notes`.
    var router: ServiceRouter {
        ServiceRouter().mounting(
            NotesServer(store: serverStore, codecs: CodecSet([JSONCodec()]), policy: policy), at: "/notes")
    }

    /// Runs `body` with a transport to the server as Ada, by `route`.
    func withTransport<Result: Sendable>(
        _ route: Route, _ body: (any SyncClientTransport) async throws -> Result
    ) async throws -> Result {
        switch route {
        case .loopback:
            return try await body(LoopbackTransport(service: router, authenticator: Self.authenticator).with(Self.ada))
        case .http:
            return try await HTTPSyncServer.withRunningServer(service: router, authenticator: Self.authenticator) {
                baseURL in try await body(HTTPClientTransport(baseURL: baseURL).with(Self.ada))
            }
        }
    }

    /// Runs `body` with two devices, `phone` and `laptop`, reached by `route`,
    /// that both hold the note `Shared` the phone made with `text`, and its id.
    func withTwoDevices(
        _ route: Route, sharing text: String, _ body: (NotesClient, NotesClient, String) async throws -> Void
    ) async throws {
        try await withTransport(route) { transport in
            let phone = device("phone", transport)
            let laptop = device("laptop", transport)
            let id = try await phone.save(title: "Shared", text: text)
            try await phone.sync()
            try await laptop.sync()
            try await body(phone, laptop, id)
        }
    }

    /// A device with an empty store, retrying at once (no waits in tests).
    func device(_ name: String, _ transport: any SyncClientTransport) -> NotesClient {
        NotesClient(
            store: MemoryStore(), device: name, transport: transport, codec: JSONCodec(),
            retry: RetryPolicy(maxAttempts: 3, initialDelay: .zero), clock: clock.wall)
    }

    /// Moves everyone's wall time on by a second, so the next change is newer.
    func tick() { clock.advance(by: .seconds(1)) }
}
