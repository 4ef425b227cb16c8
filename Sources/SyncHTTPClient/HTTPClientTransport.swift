public import AsyncHTTPClient
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization
public import SyncCore
import SyncHTTP

/// Sends ``SyncRequest``s over HTTP/1.1 with AsyncHTTPClient.
///
/// ```swift
/// let transport = HTTPClientTransport(baseURL: URL(string: "https://sync.example.com")!)
///     .with(CredentialsMiddleware(.basic(username: "ada", password: secret)))
/// let response = try await transport.send(SyncRequest(method: .get, path: "/deltas/from:0"))
/// ```
///
/// The request's path (with its query) is appended to ``baseURL``; its
/// content type, accept list, credentials (`Authorization`), session (the
/// `ota-session` cookie), device (`X-Device-Token`) and user agent become headers — the user agent is
/// ``AnchorageVersion/userAgent`` unless the request names one. Any HTTP status
/// comes back as a ``SyncResponse``; only a failure to get one — no connection,
/// a timeout, an answer larger than ``Configuration/maxResponseBytes``, a TLS
/// handshake that failed — throws a ``TransportError``.
///
/// ## HTTPS
/// An `https://` base URL works with every initializer; the server's
/// certificate must then be signed by an authority the client trusts. The
/// system's trust store holds the public ones. For a server whose certificate
/// a private authority signed (your own CA), make the transport with
/// ``init(baseURL:configuration:trustRoots:)``:
/// ```swift
/// let transport = try HTTPClientTransport(
///     baseURL: URL(string: "https://sync.internal:8443")!,
///     trustRoots: .certificates(pemFile: "/etc/anchorage/ca.pem"))
/// // … requests …
/// try await transport.shutdown()
/// ```
/// A certificate the client does not trust fails with
/// ``TransportError/Code/tlsFailed``, which is not retried. Prefer that
/// initializer for any `https://` server (``TrustRoots/system`` for one with
/// a public certificate): it reports a failed handshake at once, while on
/// the shared client AsyncHTTPClient keeps trying the connection until the
/// ``Configuration/timeout`` and may then report a time-out instead.
///
/// ## A server that cannot be reached
/// A connection that is refused fails at once, and one the server does not
/// answer after ``sharedClient``'s connect time-out (10 s), with
/// ``TransportError/Code/connectionFailed`` and a line such as `cannot connect
/// to 127.0.0.1:39377: connection refused` (``ConnectionFailure``); a
/// `SyncEndpoint` retries it within its `RetryPolicy`'s budget. (AsyncHTTPClient's
/// own `HTTPClient.shared` would keep retrying a refused connection until the
/// request's ``Configuration/timeout``: a transport made with it, and with a
/// client of your own that does, reports a server that is down only then.)
///
/// Who shuts the `HTTPClient` down:
/// - ``init(baseURL:configuration:client:)`` uses a client it is given — by
///   default ``sharedClient``, which never needs shutting
///   down; a client of your own you shut down yourself after the last request.
/// - ``init(baseURL:configuration:clientConfiguration:)`` and
///   ``init(baseURL:configuration:trustRoots:)`` make a client the transport
///   owns; call ``shutdown()`` after the last request (copies of the transport
///   share that client).
public struct HTTPClientTransport: SyncClientTransport {
    /// Limits of one exchange.
    public struct Configuration: Sendable, Hashable {
        /// How long one request may take, from sending to the last byte of the answer.
        public var timeout: Duration
        /// The largest answer body accepted, as it arrives and decoded; a larger one fails with ``TransportError``.
        public var maxResponseBytes: Int
        /// Whether requests say `Accept-Encoding: gzip, deflate`, and compressed answers are decoded.
        public var acceptsCompressedAnswers: Bool
        /// The smallest request body sent gzip-compressed to a server that said it reads gzip (its answers'
        /// `Accept-Encoding`, RFC 7694); `nil` never compresses.
        public var compressRequestsAbove: Int?

        /// Makes a configuration: 60 s and 64 MiB by default, compressed answers taken, and request bodies
        /// of 1 KiB or more compressed for a server that reads them.
        public init(
            timeout: Duration = .seconds(60), maxResponseBytes: Int = 64 << 20, acceptsCompressedAnswers: Bool = true,
            compressRequestsAbove: Int? = 1_024
        ) {
            self.timeout = timeout
            self.maxResponseBytes = maxResponseBytes
            self.acceptsCompressedAnswers = acceptsCompressedAnswers
            self.compressRequestsAbove = compressRequestsAbove
        }
    }

    /// The server's address; request paths are appended to it.
    public let baseURL: URL
    /// Limits of one exchange.
    public let configuration: Configuration
    /// The AsyncHTTPClient client requests go through.
    public let client: HTTPClient
    /// Whether the transport made ``client`` and so shuts it down in ``shutdown()``.
    public let ownsClient: Bool
    /// ``baseURL`` as text without a trailing slash: a request's path is appended to it.
    private let urlPrefix: String

    /// The client transports use unless given another: one for the whole process, never shut down,
    /// with the system's certificate authorities, a connect time-out of 10 seconds (AsyncHTTPClient
    /// also bounds the wait for a free connection by it), up to 32 connections to one server, and a
    /// refused connection failing at once rather than being tried again until the request's time-out.
    public static let sharedClient: HTTPClient = processClient(connectionsPerServer: 32)

    /// A client for the whole process with ``sharedClient``'s settings — never shut down, the system's
    /// certificate authorities, a connect time-out of 10 seconds that also bounds the wait for a free
    /// connection, a refused connection failing at once — and up to `connectionsPerServer` connections
    /// to one server.
    public static func processClient(connectionsPerServer: Int) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerServer
        configuration.timeout.connect = .seconds(10)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Makes a transport over a client someone else shuts down.
    /// - Parameters:
    ///   - baseURL: The server's address, such as `http://127.0.0.1:8080`.
    ///   - configuration: Timeout and answer size limit.
    ///   - client: The HTTP client; ``sharedClient`` by default. The caller keeps
    ///     the duty to shut a client of its own down; ``shutdown()`` leaves it running.
    public init(baseURL: URL, configuration: Configuration = Configuration(), client: HTTPClient = sharedClient) {
        self.baseURL = baseURL
        self.configuration = configuration
        self.client = client
        self.ownsClient = false
        self.urlPrefix = Self.urlPrefix(of: baseURL)
    }

    /// Makes a transport with a client of its own (its own connection pool,
    /// proxy, TLS or connect-timeout settings); call ``shutdown()`` after the last request.
    /// - Parameters:
    ///   - baseURL: The server's address, such as `http://127.0.0.1:8080`.
    ///   - configuration: Timeout and answer size limit.
    ///   - clientConfiguration: AsyncHTTPClient's settings for the new client.
    public init(
        baseURL: URL, configuration: Configuration = Configuration(),
        clientConfiguration: HTTPClient.Configuration
    ) {
        self.baseURL = baseURL
        self.configuration = configuration
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        self.ownsClient = true
        self.urlPrefix = Self.urlPrefix(of: baseURL)
    }

    private static func urlPrefix(of baseURL: URL) -> String {
        var prefix = baseURL.absoluteString
        while prefix.hasSuffix("/") { prefix.removeLast() }
        return prefix
    }

    /// Makes a transport with a client of its own that trusts the certificate
    /// authorities in `trustRoots`; call ``shutdown()`` after the last request.
    ///
    /// The client does not keep retrying a failed connection until the
    /// timeout, as AsyncHTTPClient otherwise does: a refused connection
    /// fails at once (``TransportError/Code/connectionFailed``, which a
    /// `SyncEndpoint` retries by its `RetryPolicy`), and so does a
    /// certificate the client does not trust (``TransportError/Code/tlsFailed``).
    /// - Parameters:
    ///   - baseURL: The server's address, such as `https://sync.internal:8443`.
    ///   - configuration: Timeout and answer size limit.
    ///   - trustRoots: The certificate authorities a server's certificate must be signed by.
    public init(baseURL: URL, configuration: Configuration = Configuration(), trustRoots: TrustRoots) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = trustRoots.nioTrustRoots
        var clientConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        self.init(baseURL: baseURL, configuration: configuration, clientConfiguration: clientConfiguration)
    }

    /// Shuts down the client when the transport owns it; does nothing otherwise.
    ///
    /// Requests sent after it fail with ``TransportError``.
    /// - Throws: AsyncHTTPClient's error when the client was already shut down.
    public func shutdown() async throws {
        guard ownsClient else { return }
        try await client.shutdown()
    }

    /// Sends `request` and returns the server's answer, whatever its status.
    ///
    /// A body of ``Configuration/compressRequestsAbove`` bytes or more goes gzip-compressed when this
    /// server said it reads gzip; should the server still answer 415, the request goes again
    /// uncompressed and this server gets uncompressed bodies from then on. A compressed answer is
    /// decoded (``Configuration/acceptsCompressedAnswers``).
    /// - Throws: ``TransportError`` when no complete answer arrives.
    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        let origin = urlPrefix
        guard let threshold = configuration.compressRequestsAbove, request.body.count >= threshold,
            RequestCompression.state(of: origin) == .accepted,
            let compressed = try? ContentCoding.gzip.compress(request.body), compressed.count < request.body.count
        else {
            return try await exchange(request, compressedBody: nil)
        }
        let answer = try await exchange(request, compressedBody: compressed)
        guard answer.status == 415 else { return answer }
        let plain = try await exchange(request, compressedBody: nil)
        if plain.status != 415 { RequestCompression.record(.refused, for: origin) }
        return plain
    }

    /// One request on the wire: `request`, with `compressedBody` in place of its body when given.
    private func exchange(_ request: SyncRequest, compressedBody: [UInt8]?) async throws -> SyncResponse {
        var httpRequest = makeHTTPRequest(request)
        if let compressedBody {
            httpRequest.headers.replaceOrAdd(name: "Content-Encoding", value: ContentCoding.gzip.rawValue)
            httpRequest.body = .bytes(ByteBuffer(bytes: compressedBody))
        }
        let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
        // Only a failure's message needs it.
        var what: String { "\(request.method) \(request.pathWithoutQuery)" }
        do {
            let response = try await client.execute(httpRequest, deadline: deadline)
            let collected = try await response.body.collect(upTo: configuration.maxResponseBytes)
            if response.headers["accept-encoding"].contains(where: { $0.lowercased().contains("gzip") }) {
                RequestCompression.record(.accepted, for: urlPrefix)
            }
            var body = Array(buffer: collected)
            if let coding = try? ContentCoding.named(response.headers.first(name: "content-encoding")), coding.looksEncoded(body) {
                // (A client configured to decode answers itself has done so already: the bytes then do not look encoded.)
                do {
                    let decoder = coding.decoder(limit: configuration.maxResponseBytes)
                    try decoder.take(collected)
                    body = try decoder.finish()
                } catch .tooLarge {
                    throw TransportError(
                        .invalidResponse, "\(what): the answer is larger than \(configuration.maxResponseBytes) bytes decoded")
                } catch {
                    throw TransportError(.invalidResponse, "\(what): the answer is not valid \(coding.rawValue)")
                }
            }
            return SyncResponse(
                status: Int(response.status.code),
                contentType: response.headers.first(name: "content-type"),
                session: response.headers["set-cookie"].lazy.compactMap(SessionCookie.session(fromSetCookieHeader:))
                    .first,
                retryAfter: RetryAfterHeader.delay(from: response.headers.first(name: "retry-after")),
                body: body)
        } catch {
            throw failure(error, what: what)
        }
    }

    /// The ``TransportError`` for `error`, met while sending `what` (`METHOD path`) or reading its answer: a
    /// ``TransportError`` as it is, a library's error in one line with its code.
    func failure(_ error: any Error, what: String) -> TransportError {
        let host = baseURL.host ?? "the server"
        switch error {
        case let error as TransportError:
            return error
        case let error as NIOTooManyBytesError:
            return TransportError(
                .invalidResponse, "\(what): the answer is larger than \(configuration.maxResponseBytes) bytes",
                underlying: error)
        case let error as HTTPClientError where error == .connectTimeout:
            return TransportError(
                .connectionFailed,
                ConnectionFailure.describe(ChannelError.connectTimeout(.zero), host: host, port: port) ?? "\(error)",
                underlying: error)
        case let error as HTTPClientError where Self.timeoutErrors.contains(error):
            return TransportError(
                .timedOut, "the server at \(baseURL.host ?? "?"):\(port) did not answer \(what) within \(configuration.timeout)",
                underlying: error)
        case let error as HTTPClientError where Self.malformedAnswerErrors.contains(error):
            return TransportError(.invalidResponse, "\(what): the answer is not valid HTTP: \(error)", underlying: error)
        case let error as HTTPParserError:
            return TransportError(.invalidResponse, "\(what): the answer is not valid HTTP: \(error)", underlying: error)
        case let error as NIOSSLError:
            return TransportError(.tlsFailed, Self.describe(error), underlying: error)
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return TransportError(.tlsFailed, "the server's certificate does not name \(host)", underlying: error)
        case let error as NIOSSLExtraError:
            return TransportError(.tlsFailed, "the TLS handshake failed (\(error))", underlying: error)
        case let error as HTTPClientError where error == .remoteConnectionClosed:
            let line = ConnectionFailure.describe(ChannelError.eof, host: host, port: port) ?? "\(what) failed: \(error)"
            return TransportError(.connectionFailed, line, underlying: error)
        default:
            let line = ConnectionFailure.describe(error, host: host, port: port) ?? "\(what) failed: \(error)"
            return TransportError(.connectionFailed, line, underlying: error)
        }
    }

    /// The server's port: the base URL's, or its scheme's.
    private var port: Int { baseURL.port ?? (baseURL.scheme?.lowercased() == "https" ? 443 : 80) }

    /// One line for a failed TLS handshake, saying first whether the certificate is not trusted.
    private static func describe(_ error: NIOSSLError) -> String {
        guard case .handshakeFailed(let failure) = error else { return "the TLS handshake failed (\(error))" }
        let reasons: [String]
        switch failure {
        case .sslError(let stack), .unknownError(let stack):
            // "Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at file:line"
            reasons = stack.map { entry in
                let text = "\(entry)"
                let message = text.split(separator: " at ").first.map(String.init) ?? text
                return message.split(separator: ":").last.map(String.init) ?? message
            }
        default:
            reasons = ["\(failure)"]
        }
        let reason = reasons.joined(separator: ", ")
        if reasons.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's certificate is not trusted (\(reason): it is not signed by a certificate authority this client trusts, or it has expired)"
        }
        return "the TLS handshake failed (\(reason))"
    }

    private static let timeoutErrors: [HTTPClientError] = [
        .deadlineExceeded, .readTimeout, .getConnectionFromPoolTimeout, .tlsHandshakeTimeout,
    ]

    private static let malformedAnswerErrors: [HTTPClientError] = [
        .bodyLengthMismatch, .identityCodingIncorrectlyPresent,
    ]

    /// `request` as AsyncHTTPClient's request; `Accept-Encoding` asked for as `compressedAnswers` says, by
    /// default as ``Configuration/acceptsCompressedAnswers`` does.
    func makeHTTPRequest(_ request: SyncRequest, compressedAnswers: Bool? = nil) -> HTTPClientRequest {
        var httpRequest = HTTPClientRequest(url: urlPrefix + (request.path.hasPrefix("/") ? "" : "/") + request.path)
        httpRequest.method = HTTPMethod(rawValue: request.method.rawValue)
        if let contentType = request.contentType { httpRequest.headers.add(name: "Content-Type", value: contentType) }
        if let accept = request.accept { httpRequest.headers.add(name: "Accept", value: accept) }
        if let credentials = request.credentials {
            httpRequest.headers.add(name: "Authorization", value: AuthorizationHeader.value(for: credentials))
        }
        if let session = request.session {
            httpRequest.headers.add(name: "Cookie", value: SessionCookie.cookieValue(for: session))
        }
        httpRequest.headers.add(name: "User-Agent", value: request.userAgent ?? AnchorageVersion.userAgent)
        if let device = request.device { httpRequest.headers.add(name: "X-Device-Token", value: device) }
        if compressedAnswers ?? configuration.acceptsCompressedAnswers {
            httpRequest.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        }
        if !request.body.isEmpty || request.method == .post || request.method == .put {
            httpRequest.body = .bytes(ByteBuffer(bytes: request.body))
        }
        return httpRequest
    }
}

/// What each server (by base URL) said about compressed request bodies, for the whole process: it
/// reads gzip (its answers' `Accept-Encoding`), or it refused a compressed body (415) — which stands.
enum RequestCompression {
    enum State: Sendable { case unknown, accepted, refused }

    private static let states = Mutex<[String: State]>([:])

    static func state(of origin: String) -> State { states.withLock { $0[origin] ?? .unknown } }

    static func record(_ state: State, for origin: String) {
        states.withLock { states in
            guard states[origin] != .refused else { return }
            states[origin] = state
        }
    }
}
