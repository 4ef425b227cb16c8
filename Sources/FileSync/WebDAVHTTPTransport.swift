public import AsyncHTTPClient
public import Foundation
public import SyncCore
import SyncHTTP
public import SyncHTTPClient
import NIOCore
import Synchronization

/// Sends WebDAV requests over HTTP/1.1 through SyncHTTPClient's ``SyncHTTPClient/HTTPClientTransport`` and client
/// middleware, as every Anchorage client sends its requests, and retries what may pass by a
/// ``SyncCore/RetryPolicy``; file bodies stream from and to disk in 64 KiB chunks.
///
/// ```swift
/// let transport = WebDAVHTTPTransport(
///     baseURL: URL(string: "https://files.example.com/remote.php/dav/files/ada/")!,
///     username: "ada", password: secret)
/// let client = WebDAVClient(transport: transport)
/// ```
///
/// Or from a transport and middleware of your own — a private certificate authority, a metrics or
/// logging middleware:
/// ```swift
/// let http = try HTTPClientTransport(
///     baseURL: URL(string: "https://files.internal/dav/")!,
///     configuration: .init(timeout: .seconds(3600)), trustRoots: .certificates(pemFile: "ca.pem"))
/// let transport = WebDAVHTTPTransport(http, middleware: [CredentialsMiddleware(.basic(username: "ada", password: secret))])
/// // … syncs …
/// try await transport.shutdown()
/// ```
///
/// ## The exchange
/// Each attempt is a ``SyncCore/SyncRequest`` — the method, `/` and the item's escaped path (appended
/// to the base URL as ``SyncHTTPClient/HTTPClientTransport`` appends every path) and, for a small body
/// such as a `PROPFIND`'s, that body — passed through ``middleware`` (the first sees it first), and
/// then sent with ``SyncHTTPClient/HTTPClientTransport/send(_:adding:body:receive:)``, which adds the
/// WebDAV headers (`Depth`, `If-Match`, `Destination`, …) and streams a file's body. The
/// middleware sees the answer as a ``SyncCore/SyncResponse``: a file's bytes have gone to disk by
/// then, and its body is empty. Credentials are ``SyncCore/CredentialsMiddleware``'s
/// `Authorization`; requests carry the transport's `User-Agent` like every client's. Answers read
/// into memory (``WebDAVResponseDestination/memory(limit:)``), such as listings, are asked for
/// compressed (`Accept-Encoding: gzip, deflate`) and decoded; a file's bytes travel as they are, and
/// so does the answer to an upload.
///
/// ## Retries
/// Whether a failure is tried again is decided by its class: only a failure that may pass
/// (``WebDAVError/failureClass`` ``SyncCore/SyncFailureClass/retryLater``) and that sending again
/// cannot make worse, as ``retry`` counts, waits and bounds it (``SyncCore/RetryPolicy/maxElapsed``
/// after failures with no answer):
/// - no connection made (refused, no answer to the connect within the client's connect time-out,
///   10 s on ``transferClient``): every request, since none reached the
///   server;
/// - an answer lost after the request may have arrived (a cut, a time-out): `GET` and `PROPFIND`
///   only, which change nothing; a write whose answer was lost is left to the next sync, which looks
///   at what the server holds before it writes again;
/// - 429 and 503 for every request, and another 5xx but 507 for `GET` and `PROPFIND`
///   (``SyncCore/RetryPolicy/isTransient(status:idempotent:)``), after the answer's `Retry-After`
///   when it gives one no longer than ``SyncCore/RetryPolicy/maxRetryAfter``.
///
/// A failed TLS handshake, refused credentials, a refusal or a conflict is never sent again. With
/// ``SyncCore/RetryPolicy/default`` a server that cannot be reached is reported within about 20
/// seconds and a connect time-out.
public struct WebDAVHTTPTransport: WebDAVTransport {
    /// The transport requests go through; its base URL is the synced folder's and should end with `/`.
    public let http: HTTPClientTransport
    /// The middleware every attempt passes through, the first seeing it first.
    public let middleware: [any SyncClientMiddleware]
    /// Which failures are tried again, after what wait, and for how long.
    public let retry: RetryPolicy
    /// The clock the waits between attempts are slept on.
    public let sleeper: any Clock<Duration>
    /// The clock the waits between attempts are slept on.
    @available(*, deprecated, renamed: "sleeper")
    public var clock: any Clock<Duration> { sleeper }

    /// The server's base URL, ``http``'s.
    public var baseURL: URL { http.baseURL }
    /// How long one request may take, its body's transfer included: ``http``'s time-out.
    public var timeout: Duration { http.configuration.timeout }
    /// The AsyncHTTPClient client requests go through, ``http``'s.
    public var client: HTTPClient { http.client }

    /// Makes a transport over `http`.
    /// - Parameters:
    ///   - http: The HTTP transport; its base URL is the folder on the server that is synced
    ///     (`https://host/dav/`), and its ``SyncHTTPClient/HTTPClientTransport/Configuration/timeout`` bounds
    ///     each request, a large file's transfer included. Its other settings (compression, answer size)
    ///     do not apply: WebDAV bodies are streamed.
    ///   - middleware: What every attempt passes through, the first seeing it first:
    ///     ``SyncCore/CredentialsMiddleware`` for an account's credentials, a metrics middleware, a
    ///     test's fault injection.
    ///   - retry: Which failures are tried again and how.
    ///   - sleeper: The clock the waits are slept on: a test passes a `TestClock`.
    public init(
        _ http: HTTPClientTransport, middleware: [any SyncClientMiddleware] = [], retry: RetryPolicy = .default,
        sleeper: any Clock<Duration> = ContinuousClock()
    ) {
        self.http = http
        self.middleware = middleware
        self.retry = retry
        self.sleeper = sleeper
    }

    /// Makes a transport over `http` whose waits are slept on `clock`.
    @available(*, deprecated, renamed: "init(_:middleware:retry:sleeper:)")
    public init(
        _ http: HTTPClientTransport, middleware: [any SyncClientMiddleware] = [], retry: RetryPolicy = .default,
        clock: any Clock<Duration>
    ) {
        self.init(http, middleware: middleware, retry: retry, sleeper: clock)
    }

    /// Makes a transport over a client someone else shuts down, with HTTP Basic credentials.
    /// - Parameters:
    ///   - baseURL: the folder on the server that is synced (`http://host/dav/`).
    ///   - username: the account's name; `nil` sends no credentials.
    ///   - password: its password.
    ///   - timeout: how long one request may take (a 1 GB body needs minutes).
    ///   - client: the HTTP client; by default ``transferClient``, which never needs shutting down, fails a
    ///     refused connection at once and gives up a connect after 10 seconds.
    ///   - retry: Which failures are tried again and how.
    public init(
        baseURL: URL, username: String? = nil, password: String = "", timeout: Duration = .seconds(3600),
        client: HTTPClient = WebDAVHTTPTransport.transferClient, retry: RetryPolicy = .default
    ) {
        self.init(
            HTTPClientTransport(baseURL: baseURL, configuration: .init(timeout: timeout), client: client),
            middleware: Self.credentials(username, password), retry: retry)
    }

    /// Makes a transport with a client of its own that trusts the certificate authorities in `trustRoots`,
    /// with HTTP Basic credentials; call ``shutdown()`` after the last request.
    ///
    /// A certificate the client does not trust fails at once with ``WebDAVError/Code/tlsFailed``.
    /// - Parameters:
    ///   - baseURL: the folder on the server that is synced (`https://host/dav/`).
    ///   - username: the account's name; `nil` sends no credentials.
    ///   - password: its password.
    ///   - timeout: how long one request may take (a 1 GB body needs minutes).
    ///   - trustRoots: the certificate authorities a server's certificate must be signed by.
    ///   - retry: Which failures are tried again and how.
    public init(
        baseURL: URL, username: String? = nil, password: String = "", timeout: Duration = .seconds(3600),
        trustRoots: HTTPClientTransport.TrustRoots, retry: RetryPolicy = .default
    ) {
        self.init(
            HTTPClientTransport(baseURL: baseURL, configuration: .init(timeout: timeout), trustRoots: trustRoots),
            middleware: Self.credentials(username, password), retry: retry)
    }

    /// The client file sync uses unless given another: SyncHTTPClient's ``SyncHTTPClient/HTTPClientTransport/sharedClient``
    /// settings (one for the process, never shut down, a refused connection failing at once, a connect
    /// given up after 10 seconds), but up to 256 connections to one server instead of 32. A transfer
    /// holds its connection for as long as its file takes, and AsyncHTTPClient bounds a request's wait
    /// for a free connection by the connect time-out: with 32, a 33rd transfer to the same server
    /// (several folders synced in one process) would fail after 10 seconds while the others go on.
    public static let transferClient: HTTPClient = HTTPClientTransport.processClient(connectionsPerServer: 256)

    private static func credentials(_ username: String?, _ password: String) -> [any SyncClientMiddleware] {
        guard let username else { return [] }
        return [CredentialsMiddleware(.basic(username: username, password: password))]
    }

    /// Shuts down ``http``'s client when ``http`` made it (``init(baseURL:username:password:timeout:trustRoots:retry:)``);
    /// does nothing otherwise.
    /// - Throws: AsyncHTTPClient's error when the client was already shut down.
    public func shutdown() async throws {
        try await http.shutdown()
    }

    /// The URL of `path` under ``baseURL``, each segment percent-encoded.
    public func url(of path: String) -> String {
        var base = baseURL.absoluteString
        if !base.hasSuffix("/") { base += "/" }
        return base + WebDAVPath.escape(path)
    }

    /// Sends `request`, and again after a failure that may pass, as the type's overview says.
    /// - Returns: The last answer, whatever its status.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Code/noAnswer``, ``WebDAVError/Code/tlsFailed``,
    ///   ``WebDAVError/Code/deviceFull`` or ``WebDAVError/Code/deviceFile``) for the last attempt;
    ///   `CancellationError` when the task is cancelled while it waits.
    public func send(_ request: WebDAVRequest) async throws -> WebDAVResponse {
        let onlyReads = Self.onlyReads(request.method)
        var random = SystemRandomNumberGenerator()
        let elapsed = RetryPolicy.stopwatch(on: sleeper)
        var attempt = 1
        while true {
            let wait: Duration
            do {
                let (response, retryAfter) = try await sendOnce(request)
                let failure = WebDAVError(status: response.status, method: request.method, path: request.path)
                guard !(200..<400).contains(response.status), attempt < retry.maxAttempts, failure.failureClass == .retryLater,
                    RetryPolicy.isTransient(status: response.status, idempotent: onlyReads),
                    retryAfter.map({ $0 <= retry.maxRetryAfter }) ?? true
                else { return response }
                wait = retryAfter ?? retry.jitteredDelay(beforeRetry: attempt, using: &random)
            } catch let error as WebDAVError {
                let again = error.resend == .any || (error.resend == .readsOnly && onlyReads)
                guard again, error.failureClass == .retryLater, attempt < retry.maxAttempts else { throw error }
                wait = retry.jitteredDelay(beforeRetry: attempt, using: &random)
                // No answer, and out of time for another attempt: the server cannot be reached.
                if let budget = retry.maxElapsed, elapsed() + wait > budget { throw error }
            }
            try await sleeper.sleep(for: wait)
            attempt += 1
        }
    }

    /// Whether `method` only reads, so that sending it twice does no more than sending it once, even
    /// when the first reached the server.
    static func onlyReads(_ method: String) -> Bool {
        ["GET", "HEAD", "PROPFIND", "OPTIONS"].contains(method.uppercased())
    }

    /// One attempt: the answer, and the wait its `Retry-After` asks for.
    private func sendOnce(_ request: WebDAVRequest) async throws -> (WebDAVResponse, Duration?) {
        var syncRequest = SyncRequest(method: SyncRequest.Method(rawValue: request.method), path: "/" + WebDAVPath.escape(request.path))
        let file: (path: String, syncing: Bool)? = if case .file(let path, let syncing) = request.destination { (path, syncing) } else { nil }
        let limit: Int = if case .memory(let given) = request.destination { given } else { 1 << 20 }
        let upload: String? = if case .file(let path) = request.body { path } else { nil }
        // Listings and other answers read into memory may come compressed; a file's bytes are asked for
        // as they are (a compressing server would also change the file's ETag), and an upload's answer
        // is asked for as it is, as it always was.
        let headers =
            request.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
            + (file == nil && upload == nil ? [(name: "Accept-Encoding", value: "gzip, deflate")] : [])
        if case .bytes(let bytes) = request.body { syncRequest.body = bytes }
        let answer = AnswerHead()
        let http = self.http
        let response: SyncResponse
        do {
            response = try await Self.run(syncRequest, through: middleware[...]) { syncRequest in
                // Made for each call, so that a middleware that sends twice sends the whole file twice.
                let body = try upload.map { try FileChunks.requestBody(from: $0, for: request) }
                return try await http.send(syncRequest, adding: headers, body: body) { streamed in
                    var response = streamed.head
                    var headers: [String: String] = [:]
                    for header in streamed.headers { headers[header.name.lowercased()] = header.value }
                    answer.set(status: response.status, headers: headers)
                    if let file, (200..<300).contains(response.status) {
                        try await FileChunks.write(streamed.body, to: file.path, syncing: file.syncing)
                        return response
                    }
                    response.body = try await Self.collect(streamed.body, limit: limit, of: request, answer: answer)
                    return response
                }
            }
        } catch let error as TransportError {
            throw Self.failure(error, of: request, status: answer.status)
        } catch let error as WebDAVError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            // A middleware's own error: no answer, and nothing known about sending again.
            throw WebDAVError(.noAnswer, method: request.method, path: request.path, status: answer.status, detail: "\(error)")
        }
        return (WebDAVResponse(status: response.status, headers: answer.headers, body: response.body), response.retryAfter)
    }

    /// Passes `request` through `middleware`, the first seeing it first, and then to `last`.
    private static func run(
        _ request: SyncRequest, through middleware: ArraySlice<any SyncClientMiddleware>,
        to last: @escaping @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        guard let first = middleware.first else { return try await last(request) }
        let rest = middleware.dropFirst()
        return try await first.intercept(request) { try await run($0, through: rest, to: last) }
    }

    /// An answer's body read into memory, up to `limit` bytes, and decoded when it came compressed
    /// (`answer` then forgets the `Content-Encoding`).
    private static func collect(
        _ body: HTTPClientTransport.StreamedAnswer.Body, limit: Int, of request: WebDAVRequest, answer: AnswerHead
    ) async throws -> [UInt8] {
        let status = answer.status
        var collected: [UInt8] = []
        for try await buffer in body {
            guard collected.count + buffer.readableBytes <= limit else {
                throw WebDAVError(
                    .badAnswer, method: request.method, path: request.path, status: status,
                    detail: "the answer is larger than \(limit) bytes")
            }
            collected.append(contentsOf: buffer.readableBytesView)
        }
        if let coding = try? ContentCoding.named(answer.headers["content-encoding"]), coding.looksEncoded(collected) {
            let decoder = coding.decoder(limit: limit)
            do {
                try decoder.take(ByteBuffer(bytes: collected))
                collected = try decoder.finish()
            } catch {
                throw WebDAVError(
                    .badAnswer, method: request.method, path: request.path, status: status,
                    detail: error == .tooLarge ? "the answer is larger than \(limit) bytes decoded" : "the answer is not valid \(coding.rawValue)")
            }
            answer.forgetContentEncoding()
        }
        return collected
    }

    /// The error of a request that got no (whole) answer: one line saying why (`cannot connect to
    /// host:port: connection refused`, `the server at … did not answer … within …`), and whether it may be
    /// sent again — decided by the failure's code and the library's error below it, never its text.
    static func failure(_ error: TransportError, of request: WebDAVRequest, status: Int?) -> WebDAVError {
        if let own = error.underlying as? WebDAVError { return own }  // a file that could not be read
        if error.code == .tlsFailed {
            return WebDAVError(.tlsFailed, method: request.method, path: request.path, detail: error.message)
        }
        var failure = WebDAVError(.noAnswer, method: request.method, path: request.path, status: status, detail: error.message)
        if error.code == .connectionFailed || error.code == .timedOut {
            failure.resend = status == nil && neverArrived(error) ? .any : .readsOnly
        }
        return failure
    }

    /// Whether the request of `error` never reached the server: no connection was made for it.
    static func neverArrived(_ error: TransportError) -> Bool {
        guard let underlying = error.underlying else { return false }
        if ConnectionFailure.isUnreachable(underlying) { return true }
        if let library = underlying as? HTTPClientError {
            return library == .connectTimeout || library == .getConnectionFromPoolTimeout
        }
        return false
    }
}

/// The status and headers of an attempt's answer, kept beside the ``SyncCore/SyncResponse`` that passes
/// back through the middleware (which has no place for them).
private final class AnswerHead: Sendable {
    private let state = Mutex<(status: Int?, headers: [String: String])>((nil, [:]))

    var status: Int? { state.withLock { $0.status } }
    var headers: [String: String] { state.withLock { $0.headers } }

    func set(status: Int, headers: [String: String]) { state.withLock { $0 = (status, headers) } }

    func forgetContentEncoding() { state.withLock { $0.headers["content-encoding"] = nil } }
}
