/// Sends requests to a sync service and returns its answers: the client side
/// of a transport.
///
/// Anchorage ships `HTTPClientTransport` (AsyncHTTPClient, in `SyncHTTPClient`) and
/// ``LoopbackTransport`` (calls a service in-process). Wrap any transport in
/// middleware with ``SyncClientTransport/with(_:)``.
///
/// A transport throws only when no answer arrived (connection refused or
/// cut, time-out); an HTTP error status is an answer, returned as a
/// ``SyncResponse``.
public protocol SyncClientTransport: Sendable {
    /// Sends a request and waits for the answer.
    /// - Throws: ``TransportError`` or the underlying library's error when no answer arrived.
    func send(_ request: SyncRequest) async throws -> SyncResponse
}

/// Wraps a client transport: authentication, logging, retries, fault injection.
public protocol SyncClientMiddleware: Sendable {
    /// Handles `request`, usually by calling `next` with it (or a changed copy).
    func intercept(
        _ request: SyncRequest,
        next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse
}

extension SyncClientTransport {
    /// This transport with `middleware` in front of it: the middleware sees every request first.
    public func with(_ middleware: any SyncClientMiddleware) -> MiddlewareTransport {
        MiddlewareTransport(base: self, middleware: middleware)
    }
}

/// A client transport with a middleware in front of it.
public struct MiddlewareTransport: SyncClientTransport {
    /// The transport the middleware forwards to.
    public let base: any SyncClientTransport
    /// The middleware.
    public let middleware: any SyncClientMiddleware

    /// Puts `middleware` in front of `base`.
    public init(base: any SyncClientTransport, middleware: any SyncClientMiddleware) {
        self.base = base
        self.middleware = middleware
    }

    /// Passes the request through the middleware to the base transport.
    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        let base = self.base
        return try await middleware.intercept(request) { try await base.send($0) }
    }
}

/// A client middleware that only changes each request before passing it on:
/// sets its credentials, its device, its user agent. Write ``adjust(_:)``; the
/// middleware's ``SyncClientMiddleware/intercept(_:next:)`` comes with it.
///
/// ```swift
/// struct UserAgentMiddleware: SyncRequestAdjuster {
///     func adjust(_ request: inout SyncRequest) { request.userAgent = "Notes/2.1" }
/// }
/// ```
public protocol SyncRequestAdjuster: SyncClientMiddleware {
    /// Changes `request` before it is sent.
    func adjust(_ request: inout SyncRequest)
}

extension SyncRequestAdjuster {
    /// Changes the request with ``adjust(_:)`` and forwards it.
    public func intercept(
        _ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        var request = request
        adjust(&request)
        return try await next(request)
    }
}

/// A client middleware that sets the credentials of every request.
public struct CredentialsMiddleware: SyncRequestAdjuster {
    /// The credentials to send.
    public var credentials: Credentials
    /// Makes the middleware.
    public init(_ credentials: Credentials) { self.credentials = credentials }
    /// Sets the credentials.
    public func adjust(_ request: inout SyncRequest) { request.credentials = credentials }
}

/// Why a transport could not deliver a request or its answer.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The connection could not be made or was cut before the answer arrived.
        public static let connectionFailed = Code("connection failed")
        /// No answer arrived in time.
        public static let timedOut = Code("timed out")
        /// The answer was not a valid HTTP answer, or was larger than allowed.
        public static let invalidResponse = Code("invalid response")
        /// The TLS handshake failed: the server's certificate is not trusted or
        /// does not name the server, or the two ends share no TLS version.
        /// Sending again meets the same certificate, so it is not retried.
        public static let tlsFailed = Code("TLS failed")
        /// The code's name.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, for a person.
    public var message: String
    /// The error of the library below, if any.
    public var underlying: (any Error)?

    /// Makes an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
