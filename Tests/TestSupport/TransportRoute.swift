public import SyncCore
import SyncHTTPClient
public import SyncHTTPServer

/// How a test reaches a service: over real HTTP on a loopback port, or in
/// process. Parameterize a test over ``allCases`` to run one body both ways.
///
/// ```swift
/// @Test(arguments: TransportRoute.allCases)
/// func devicesConverge(route: TransportRoute) async throws {
///     try await route.withTransport(to: router, credentials: TransportRoute.ada) { transport in
///         // … clients syncing over `transport` …
///     }
/// }
/// ```
///
/// Both routes authenticate every request with the same authenticator — by
/// default ``defaultAuthenticator``, which knows the accounts in ``users`` —
/// and refuse bodies over the same limit, so a test sees the same statuses
/// either way.
public enum TransportRoute: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Over real HTTP: an `HTTPSyncServer` on a free port of `127.0.0.1`, reached with an `HTTPClientTransport`.
    case http
    /// In process: a `LoopbackTransport` calling the service directly.
    case loopback

    /// The route's name, `http` or `loopback`, as test output shows it.
    public var description: String { rawValue }

    /// The accounts ``defaultAuthenticator`` accepts: `ada` with the password
    /// `secret` (``ada``) and `bob` with the bearer token `token-of-bob` (``bob``).
    public static let users: UsersFile = {
        do {
            return try UsersFile().adding(account: "ada", password: "secret", iterations: 1_000)
                .addingToken(account: "bob", token: "token-of-bob")
        } catch {
            preconditionFailure("the test users cannot be made: \(error)")
        }
    }()

    /// An authenticator that knows the accounts in ``users``: what
    /// ``withTransport(to:authenticator:credentials:maxRequestBytes:_:)`` uses unless given another.
    public static var defaultAuthenticator: UsersFileAuthenticator { UsersFileAuthenticator(users: users) }

    /// Ada's credentials for ``defaultAuthenticator``: HTTP basic, `ada` / `secret`.
    public static let ada = Credentials.basic(username: "ada", password: "secret")
    /// Bob's credentials for ``defaultAuthenticator``: the bearer token `token-of-bob`.
    public static let bob = Credentials.bearer("token-of-bob")

    /// Runs `body` with a transport to `service` along this route.
    ///
    /// Over ``http`` the server starts before `body` runs and shuts down when
    /// it returns or throws.
    /// - Parameters:
    ///   - service: what answers the requests, a `ServiceRouter` for a whole server.
    ///   - authenticator: turns each request's credentials into an account; ``defaultAuthenticator`` by default.
    ///   - credentials: when given, sent with every request (a `CredentialsMiddleware`), replacing the
    ///     request's own; when nil, each request carries its own.
    ///   - maxRequestBytes: the largest request body the server takes; larger ones are answered 413.
    ///   - body: what the test does with the transport.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or the HTTP server's error when it cannot listen.
    public func withTransport<Result: Sendable>(
        to service: any SyncService,
        authenticator: any SyncAuthenticator = TransportRoute.defaultAuthenticator,
        credentials: Credentials? = nil,
        maxRequestBytes: Int = 1 << 20,
        _ body: (any SyncClientTransport) async throws -> Result
    ) async throws -> Result {
        func signed(_ transport: any SyncClientTransport) -> any SyncClientTransport {
            guard let credentials else { return transport }
            return transport.with(CredentialsMiddleware(credentials))
        }
        switch self {
        case .http:
            return try await HTTPSyncServer.withRunningServer(
                service: service, authenticator: authenticator,
                configuration: HTTPSyncServer.Configuration(maxRequestBytes: maxRequestBytes)
            ) { baseURL in
                try await body(signed(HTTPClientTransport(baseURL: baseURL)))
            }
        case .loopback:
            return try await body(
                signed(LoopbackTransport(service: service, authenticator: authenticator, maxRequestBytes: maxRequestBytes)))
        }
    }
}
