public import Hummingbird
import HummingbirdCore
public import Logging
public import NIOCore
public import SyncCore
public import SyncHTTP

/// Serves a ``SyncService`` over HTTP/1.1 with Hummingbird, inside TLS when
/// the configuration has a certificate (``Configuration/tls``).
///
/// Every request, on any path and with any method, goes through a
/// ``SyncServiceResponder``: body limit, authentication, then the service.
/// The server is a Hummingbird `ApplicationProtocol`, and so a
/// swift-service-lifecycle `Service`: run it with ``runService(gracefulShutdownSignals:)``
/// (stops on SIGTERM and SIGINT), or add it to a `ServiceGroup` with other services.
///
/// ```swift
/// let authenticator = try UsersFileAuthenticator(contentsOf: usersFileURL)
/// let server = HTTPSyncServer(
///     service: ServiceRouter().mounting(otaServer, at: "/ota"),
///     authenticator: authenticator,
///     configuration: .init(
///         host: "0.0.0.0", port: 8443,
///         tls: try HTTPSyncServer.TLS(certificateChainFile: "cert.pem", privateKeyFile: "key.pem")))
/// try await server.runService()
/// ```
///
/// Each connection's requests run on the SwiftNIO event loop that reads the
/// connection (its task prefers that loop as its executor). A server process
/// runs faster still when the event loops are Swift Concurrency's global
/// executor, which keeps its other tasks off the cooperative pool too: call
/// `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`
/// first thing in `main`, as `anchorage serve` does.
///
/// Tests start one on a free loopback port with
/// ``withRunningServer(service:authenticator:configuration:logger:sleeper:_:)``.
public struct HTTPSyncServer: ApplicationProtocol {
    /// Where the server listens and what it accepts.
    public struct Configuration: Sendable, Hashable {
        /// The address to listen on; `127.0.0.1` serves this machine only, `0.0.0.0` every interface.
        public var host: String
        /// The port to listen on; `0` lets the system choose a free one.
        public var port: Int
        /// The largest request body accepted; larger ones are answered 413.
        public var maxRequestBytes: Int
        /// The most requests in service at once; more are answered 503 with `Retry-After`. `nil` for no limit.
        public var maxConcurrentRequests: Int?
        /// The longest a request's service may take; a slower one is answered 503 and its work cancelled. `nil` for no limit.
        public var requestTimeout: Duration?
        /// How failed logins are limited (429 with `Retry-After`); `nil` for no limit. See ``LoginThrottle``.
        public var loginThrottle: LoginThrottle.Policy?
        /// The certificate and key to serve HTTPS with; `nil` serves plain HTTP.
        public var tls: TLS?
        /// How many connections stay open and how long each part of a request may take.
        public var connections: ConnectionLimits
        /// The smallest answer body sent compressed to a client that accepts gzip or deflate; `nil` never compresses.
        public var compressAbove: Int?
        /// zlib's level for compressed answers: 1, the fastest, to 9, the smallest; 6 (zlib's own) by default.
        public var compressionLevel: Int

        /// Makes a configuration: loopback, a free port and 64 MiB bodies by default,
        /// 256 requests at once, 60 seconds each, ``LoginThrottle/Policy/standard``, plain HTTP,
        /// ``ConnectionLimits/standard``, and answers of 1 KiB or more compressed for clients that accept it, at
        /// zlib's level 6.
        public init(
            host: String = "127.0.0.1", port: Int = 0, maxRequestBytes: Int = 64 << 20,
            maxConcurrentRequests: Int? = 256, requestTimeout: Duration? = .seconds(60),
            loginThrottle: LoginThrottle.Policy? = .standard, tls: TLS? = nil, connections: ConnectionLimits = .standard,
            compressAbove: Int? = 1_024, compressionLevel: Int = ContentCoding.defaultLevel
        ) {
            self.host = host
            self.port = port
            self.maxRequestBytes = maxRequestBytes
            self.maxConcurrentRequests = maxConcurrentRequests
            self.requestTimeout = requestTimeout
            self.loginThrottle = loginThrottle
            self.tls = tls
            self.connections = connections
            self.compressAbove = compressAbove
            self.compressionLevel = compressionLevel
        }

        /// Whether ``host`` reaches this machine only: `localhost`, an address
        /// in `127.0.0.0/8`, or `::1`. Any other address — `0.0.0.0` above all —
        /// may be reached from the network, where plain HTTP shows passwords
        /// and records to anyone on the way.
        public var isLoopbackOnly: Bool {
            var address = host.lowercased()
            if address.hasPrefix("[") && address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
            if address == "localhost" || address == "::1" || address == "0:0:0:0:0:0:0:1" { return true }
            let octets = address.split(separator: ".", omittingEmptySubsequences: false)
            return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
        }

        /// `https` with ``tls``, `http` without.
        public var scheme: String { tls == nil ? "http" : "https" }
    }

    /// The service that answers every request.
    public let service: any SyncService
    /// The authenticator applied to every request.
    public let authenticator: any SyncAuthenticator
    /// Where the server listens and what it accepts.
    public let serverConfiguration: Configuration
    /// The server's logger: one line per request, and Hummingbird's own messages.
    public let logger: Logger
    private let whenRunning: (@Sendable (_ port: Int) async -> Void)?
    /// Limits failed logins, per ``Configuration/loginThrottle``; kept for the server's life.
    public let loginThrottle: LoginThrottle?
    /// Caps requests, per ``Configuration/maxConcurrentRequests`` and ``Configuration/requestTimeout``.
    public let limiter: RequestLimiter?
    /// `/health`, `/ready`, `/metrics` and the request metrics.
    public let observability: ServerObservability
    /// Fixed files answered without credentials (the operator console's page).
    public let pages: [StaticPage]

    /// Makes a server; it starts listening when run.
    /// - Parameters:
    ///   - service: The service that answers every request.
    ///   - authenticator: Decides which account each request acts for.
    ///   - configuration: Where to listen and the body limit.
    ///   - logger: Where the per-request lines go.
    ///   - onRunning: Called once the server listens, with the port it is bound to.
    ///   - sleeper: The time the login throttle and the request timeout go by (a `TestClock` in tests).
    ///   - observability: The readiness check, the `/metrics` registry and where request metrics go.
    ///   - pages: Fixed files answered without credentials (``StaticPage``).
    /// - Precondition: `configuration.maxRequestBytes` is not negative.
    public init(
        service: any SyncService,
        authenticator: any SyncAuthenticator,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "anchorage.http"),
        onRunning: (@Sendable (_ port: Int) async -> Void)? = nil,
        sleeper: any Clock<Duration> = ContinuousClock(),
        observability: ServerObservability = ServerObservability(),
        pages: [StaticPage] = []
    ) {
        precondition(configuration.maxRequestBytes >= 0, "maxRequestBytes must not be negative")
        self.pages = pages
        self.observability = observability
        self.service = service
        self.authenticator = authenticator
        self.serverConfiguration = configuration
        self.logger = logger
        self.whenRunning = onRunning
        self.loginThrottle = configuration.loginThrottle.map { LoginThrottle(policy: $0, sleeper: sleeper) }
        self.limiter =
            configuration.maxConcurrentRequests == nil && configuration.requestTimeout == nil
            ? nil
            : RequestLimiter(
                maxConcurrentRequests: configuration.maxConcurrentRequests, requestTimeout: configuration.requestTimeout,
                sleeper: sleeper)
    }

    /// Makes a server whose login throttle and request timeout go by `clock`.
    @available(*, deprecated, renamed: "init(service:authenticator:configuration:logger:onRunning:sleeper:observability:)")
    public init(
        service: any SyncService,
        authenticator: any SyncAuthenticator,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "anchorage.http"),
        onRunning: (@Sendable (_ port: Int) async -> Void)? = nil,
        clock: any Clock<Duration>,
        observability: ServerObservability = ServerObservability()
    ) {
        self.init(
            service: service, authenticator: authenticator, configuration: configuration, logger: logger,
            onRunning: onRunning, sleeper: clock, observability: observability)
    }

    /// The responder that answers every request.
    public var responder: SyncServiceResponder<SyncRequestContext> {
        SyncServiceResponder(
            service: service, authenticator: authenticator, maxRequestBytes: serverConfiguration.maxRequestBytes,
            logger: logger, loginThrottle: loginThrottle, limiter: limiter, observability: observability,
            compressAbove: serverConfiguration.compressAbove, compressionLevel: serverConfiguration.compressionLevel, pages: pages)
    }

    /// Hummingbird's configuration, made from ``serverConfiguration``: the address, and at
    /// ``ConnectionLimits/maxOpenConnections`` no further connection accepted until one closes.
    public var configuration: ApplicationConfiguration {
        ApplicationConfiguration(
            address: .hostname(serverConfiguration.host, port: serverConfiguration.port),
            availableConnectionsDelegate: serverConfiguration.connections.maxOpenConnections.map {
                MaximumAvailableConnections($0, logger: logger)
            })
    }

    /// Logs the bound address and reports the port to `onRunning`.
    public func onServerRunning(_ channel: any Channel) async {
        let port = channel.localAddress?.port ?? serverConfiguration.port
        logger.info("serving sync on \(serverConfiguration.scheme)://\(serverConfiguration.host):\(port)")
        await whenRunning?(port)
    }
}
