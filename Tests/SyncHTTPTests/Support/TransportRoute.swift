import SyncCore
import SyncHTTP

/// How a test reaches a service: over real HTTP on a loopback port, or in-process.
enum TransportRoute: String, CaseIterable, CustomStringConvertible {
    case http, loopback
    var description: String { rawValue }

    /// The accounts every test server accepts: `ada` with password `secret`, `bob` with token `token-of-bob`.
    static let users: UsersFile = {
        do {
            return try UsersFile().adding(account: "ada", password: "secret", iterations: 1_000)
                .addingToken(account: "bob", token: "token-of-bob")
        } catch {
            preconditionFailure("the test users cannot be made: \(error)")
        }
    }()

    static let ada = Credentials.basic(username: "ada", password: "secret")
    static let bob = Credentials.bearer("token-of-bob")

    /// Runs `body` with a transport to `service` along this route; an HTTP server is shut down when `body` returns.
    func withTransport<Result: Sendable>(
        to service: any SyncService, maxRequestBytes: Int = 1 << 20,
        _ body: (any SyncClientTransport) async throws -> Result
    ) async throws -> Result {
        let authenticator = UsersFileAuthenticator(users: Self.users)
        switch self {
        case .http:
            return try await HTTPSyncServer.withRunningServer(
                service: service, authenticator: authenticator, configuration: .init(maxRequestBytes: maxRequestBytes)
            ) { baseURL in
                try await body(HTTPClientTransport(baseURL: baseURL))
            }
        case .loopback:
            return try await body(
                LoopbackTransport(service: service, authenticator: authenticator, maxRequestBytes: maxRequestBytes))
        }
    }
}
