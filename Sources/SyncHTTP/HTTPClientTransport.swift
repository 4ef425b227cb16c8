public import AsyncHTTPClient
public import FoundationEssentials
import NIOCore
import NIOHTTP1
public import SyncCore

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
/// `ota-session` cookie) and user agent become headers — the user agent is
/// ``AnchorageVersion/userAgent`` unless the request names one. Any HTTP status
/// comes back as a ``SyncResponse``; only a failure to get one — no connection,
/// a timeout, an answer larger than ``Configuration/maxResponseBytes`` — throws
/// a ``TransportError``.
///
/// By default the transport uses AsyncHTTPClient's shared client, which never
/// needs shutting down. Pass your own `HTTPClient` to control its event loops
/// and connection pool; you then shut it down yourself after the last request.
public struct HTTPClientTransport: SyncClientTransport {
    /// Limits of one exchange.
    public struct Configuration: Sendable, Hashable {
        /// How long one request may take, from sending to the last byte of the answer.
        public var timeout: Duration
        /// The largest answer body accepted; a larger one fails with ``TransportError``.
        public var maxResponseBytes: Int

        /// Makes a configuration: 60 s and 64 MiB by default.
        public init(timeout: Duration = .seconds(60), maxResponseBytes: Int = 64 << 20) {
            self.timeout = timeout
            self.maxResponseBytes = maxResponseBytes
        }
    }

    /// The server's address; request paths are appended to it.
    public let baseURL: URL
    /// Limits of one exchange.
    public let configuration: Configuration
    /// The AsyncHTTPClient client requests go through.
    public let client: HTTPClient

    /// Makes a transport.
    /// - Parameters:
    ///   - baseURL: The server's address, such as `http://127.0.0.1:8080`.
    ///   - configuration: Timeout and answer size limit.
    ///   - client: The HTTP client; the shared one by default.
    public init(baseURL: URL, configuration: Configuration = Configuration(), client: HTTPClient = .shared) {
        self.baseURL = baseURL
        self.configuration = configuration
        self.client = client
    }

    /// Sends `request` and returns the server's answer, whatever its status.
    /// - Throws: ``TransportError`` when no complete answer arrives.
    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        let httpRequest = makeHTTPRequest(request)
        let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
        do {
            let response = try await client.execute(httpRequest, deadline: deadline)
            let body = try await response.body.collect(upTo: configuration.maxResponseBytes)
            let setCookies = response.headers["set-cookie"]
            return SyncResponse(
                status: Int(response.status.code),
                contentType: response.headers.first(name: "content-type"),
                session: setCookies.lazy.compactMap(SessionCookie.session(fromSetCookieHeader:)).first,
                body: Array(buffer: body))
        } catch let error as NIOTooManyBytesError {
            throw TransportError(
                .invalidResponse, "the answer is larger than \(configuration.maxResponseBytes) bytes", underlying: error)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout
            || error == .connectTimeout
        {
            throw TransportError(.timedOut, "\(request.method) \(request.pathWithoutQuery) timed out", underlying: error)
        } catch {
            throw TransportError(
                .connectionFailed, "\(request.method) \(request.pathWithoutQuery) failed: \(error)", underlying: error)
        }
    }

    private func makeHTTPRequest(_ request: SyncRequest) -> HTTPClientRequest {
        var base = baseURL.absoluteString
        if base.hasSuffix("/") { base.removeLast() }
        var httpRequest = HTTPClientRequest(url: base + (request.path.hasPrefix("/") ? "" : "/") + request.path)
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
        if !request.body.isEmpty || request.method == .post || request.method == .put {
            httpRequest.body = .bytes(ByteBuffer(bytes: request.body))
        }
        return httpRequest
    }
}

extension TimeAmount {
    /// The amount closest to `duration`, in nanoseconds.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
            ? .max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
