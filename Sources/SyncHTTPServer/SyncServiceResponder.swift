public import Hummingbird
public import Logging
public import HTTPTypes
public import NIOCore
import Prometheus
public import SyncCore
public import SyncHTTP

/// Answers every Hummingbird request — any path, any method — with a ``SyncService``.
///
/// For each request the responder reads the body up to ``maxRequestBytes``
/// (413 past it, without buffering more; a body in `Content-Encoding: gzip` or
/// `deflate` is decoded as it arrives, and the limit holds for the compressed
/// bytes and for what they decode to; another coding is 415), reads the `Authorization` header
/// (``AuthorizationHeader``), asks the ``SyncAuthenticator`` for the account
/// (401 with `WWW-Authenticate: Basic realm="anchorage"` when there is none),
/// turns the rest into a ``SyncRequest`` — method, path with query,
/// `Content-Type`, `Accept`, `User-Agent`, `X-Device-Token`, and the `ota-session` cookie
/// (``SessionCookie``) — and writes the service's ``SyncResponse`` back.
/// It logs one line per request: method, path (without the query, which may
/// hold tokens), status, account and ``RequestID``. An answer body of at least
/// ``compressAbove`` bytes goes out compressed when the request's
/// `Accept-Encoding` takes gzip or deflate.
///
/// Three paths it answers itself, before all that and without credentials
/// (see ``ServerObservability``): `GET /health`, `GET /ready` and, when
/// ``ServerObservability/prometheus`` is set, `GET /metrics`; and so the
/// ``pages`` (``StaticPage``), which hold no data. Every other
/// request is counted in the request metrics and answered with `X-Request-ID`.
///
/// With a ``limiter``, a request beyond ``RequestLimiter/maxConcurrentRequests``
/// is answered 503 before its body is read, and a service slower than
/// ``RequestLimiter/requestTimeout`` 503 with its work cancelled. With a
/// ``loginThrottle``, credentials of a locked account or client address
/// (the context's `RemoteAddressRequestContext` address, as
/// ``SyncRequestContext`` carries it) are answered 429 with `Retry-After`
/// without being checked, and every credential that proves no account counts
/// as a failure.
///
/// ``HTTPSyncServer`` runs one; mount one in your own Hummingbird application with
/// ```swift
/// let app = Application(responder: SyncServiceResponder<BasicRequestContext>(
///     service: router, authenticator: authenticator, logger: logger))
/// ```
public struct SyncServiceResponder<Context>: HTTPResponder {
    /// The `WWW-Authenticate` challenge sent with every 401.
    public static var challenge: String { "Basic realm=\"anchorage\"" }

    /// The service that answers.
    public let service: any SyncService
    /// The authenticator applied before the service.
    public let authenticator: any SyncAuthenticator
    /// The largest request body accepted (413 above it).
    public let maxRequestBytes: Int
    /// Where the per-request lines go.
    public let logger: Logger
    /// Limits failed logins per account and client address (429 with `Retry-After`); `nil` for none.
    public let loginThrottle: LoginThrottle?
    /// Caps the requests in service at once and their time (503 with `Retry-After`); `nil` for none.
    public let limiter: RequestLimiter?
    /// `/health`, `/ready`, `/metrics` and the request metrics.
    public let observability: ServerObservability
    /// The request metrics, made once for the factory of ``observability``.
    private let metricHandles: RequestMetricHandles
    /// The smallest answer body sent compressed (gzip, else deflate) to a client whose `Accept-Encoding`
    /// takes it; `nil` never compresses.
    public let compressAbove: Int?
    /// zlib's level for the answers it compresses: 1, the fastest, to 9, the smallest.
    public let compressionLevel: Int
    /// Fixed files answered to `GET` and `HEAD` without credentials, by path.
    public let pages: [String: StaticPage]

    /// Makes a responder.
    /// - Precondition: `maxRequestBytes` is not negative.
    public init(
        service: any SyncService, authenticator: any SyncAuthenticator, maxRequestBytes: Int = 64 << 20,
        logger: Logger = Logger(label: "anchorage.http"), loginThrottle: LoginThrottle? = nil,
        limiter: RequestLimiter? = nil, observability: ServerObservability = ServerObservability(),
        compressAbove: Int? = 1_024, compressionLevel: Int = ContentCoding.defaultLevel, pages: [StaticPage] = []
    ) {
        precondition(maxRequestBytes >= 0, "maxRequestBytes must not be negative")
        precondition((1...9).contains(compressionLevel), "compressionLevel is 1 to 9")
        self.pages = Dictionary(pages.map { ($0.path, $0) }, uniquingKeysWith: { _, last in last })
        self.service = service
        self.authenticator = authenticator
        self.maxRequestBytes = maxRequestBytes
        self.logger = logger
        self.loginThrottle = loginThrottle
        self.limiter = limiter
        self.observability = observability
        self.metricHandles = RequestMetricHandles(factory: observability.factory)
        self.compressAbove = compressAbove
        self.compressionLevel = compressionLevel
    }

    /// Answers one request; never throws (failures are answered with a status).
    ///
    /// `GET /health`, `GET /ready` and (when ``ServerObservability/prometheus`` is set) `GET /metrics`
    /// are answered first, without credentials; every other request gets a ``RequestID``
    /// (returned as `X-Request-ID`) and is counted in the request metrics.
    public func respond(to request: Request, context: Context) async throws -> Response {
        let path = Self.pathWithoutQuery(of: request)
        if let probe = await probeAnswer(request, path: path) { return probe }
        if let page = pageAnswer(request, path: path) { return page }
        let address = (context as? any RemoteAddressRequestContext)?.remoteAddress?.ipAddress
        let answer = await answerCounted(request, address: address, upgrade: nil)
        var response = Self.httpResponse(
            answer.response, compressedFor: request.headers[.acceptEncoding], above: compressAbove, level: compressionLevel)
        response.headers[HeaderFieldNames.requestID] = answer.requestID
        return response
    }

    /// The answer to a request that asks to switch protocols (HTTP's `Upgrade`: a WebSocket handshake),
    /// given by its head, which has no body.
    ///
    /// The request goes the way of every other: the login lock, the credentials, the request limit, the
    /// log line and the metrics, then the service, with ``SyncCore/SyncRequest/upgrade`` set to the
    /// protocol asked for. A `101` from the service grants the upgrade, and the caller switches the
    /// connection; any other answer refuses it, and is what the client gets.
    /// - Parameters:
    ///   - head: The request's head.
    ///   - remoteAddress: The client's address, for the login lock.
    /// - Returns: The answer's head (with `X-Request-ID`, and `Connection: close` unless granted), its
    ///   body, and the account the credentials proved.
    public func answerUpgrade(_ head: HTTPRequest, remoteAddress: SocketAddress?) async -> UpgradeAnswer {
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer()))
        let answer = await answerCounted(request, address: remoteAddress?.ipAddress, upgrade: head.headerFields[.upgrade])
        var response = Self.httpResponse(answer.response)
        response.headers[HeaderFieldNames.requestID] = answer.requestID
        if answer.response.status != 101 {
            response.headers[.connection] = "close"
            response.headers[.contentLength] = String(answer.response.body.count)
        }
        return UpgradeAnswer(
            head: response.head, body: ByteBuffer(bytes: answer.response.body),
            account: answer.response.status == 101 ? answer.account : nil)
    }

    /// The answer to an upgrade request: ``answerUpgrade(_:remoteAddress:)``.
    public struct UpgradeAnswer: Sendable {
        /// The answer's head: `101` when the upgrade is granted.
        public var head: HTTPResponse
        /// The answer's body (empty for `101`).
        public var body: ByteBuffer
        /// The account the request acts for, when the upgrade is granted.
        public var account: AccountID?
        /// Whether the service granted the upgrade.
        public var isGranted: Bool { head.status.code == 101 }
    }

    /// Answers one request that is not a probe, with its request id, log line and metrics.
    private func answerCounted(
        _ request: Request, address: String?, upgrade: String?
    ) async -> (response: SyncResponse, account: AccountID?, requestID: String) {
        let path = Self.pathWithoutQuery(of: request)
        let requestID = RequestID.id(fromClient: request.headers[HeaderFieldNames.requestID])
        let metrics = RequestMetrics(
            stack: observability.stack(of: path), handles: metricHandles, history: observability.loadHistory)
        let (response, account) = await RequestID.$current.withValue(requestID) {
            await respondLogged(to: request, address: address, upgrade: upgrade)
        }
        metrics.finish(status: response.status)
        return (response, account, requestID)
    }

    /// The answer to `GET /health`, `/ready` or `/metrics`, or `nil` for a request the service answers.
    private func probeAnswer(_ request: Request, path: Substring) async -> Response? {
        guard request.method == .get || request.method == .head else { return nil }
        func text(_ status: HTTPResponse.Status, _ body: String, contentType: String = "text/plain; charset=utf-8") -> Response {
            Response(
                status: status, headers: [.contentType: contentType, .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }
        switch path {
        case "/health":
            return text(.ok, "ok\n")
        case "/ready":
            guard let readiness = observability.readiness else { return text(.ok, "ready\n") }
            do {
                try await readiness()
                return text(.ok, "ready\n")
            } catch {
                logger.warning("not ready: \(error)")
                return text(.serviceUnavailable, "not ready\n")
            }
        case "/metrics":
            guard let registry = observability.prometheus else { return nil }
            return text(.ok, registry.emitToString(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        default:
            return nil
        }
    }

    /// The answer to `GET` or `HEAD` of one of the ``pages``, or `nil` for any other request.
    private func pageAnswer(_ request: Request, path: Substring) -> Response? {
        guard request.method == .get || request.method == .head, let page = pages[String(path)] else { return nil }
        var headers: HTTPFields = [
            .contentType: page.contentType, .cacheControl: "no-cache", .contentSecurityPolicy: page.contentSecurityPolicy,
            .xContentTypeOptions: "nosniff", .xFrameOptions: "DENY", .referrerPolicy: "no-referrer",
        ]
        var body = page.body
        if let compressAbove, body.count >= compressAbove {
            headers[.vary] = "Accept-Encoding"
            if let coding = ContentCoding.preferred(acceptEncoding: request.headers[.acceptEncoding]),
                let compressed = try? coding.compress(body, level: compressionLevel), compressed.count < body.count
            {
                headers[.contentEncoding] = coding.rawValue
                body = compressed
            }
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// Answers one request and logs it.
    private func respondLogged(to request: Request, address: String?, upgrade: String?) async -> (SyncResponse, AccountID?) {
        let (response, account) = await answer(request, address: address, upgrade: upgrade)
        let level: Logger.Level = response.status < 400 ? .debug : .info
        let path = Self.pathWithoutQuery(of: request)
        logger.log(
            level: level, "\(request.method.rawValue) \(path) \(response.status)",
            metadata: [
                "http.method": "\(request.method.rawValue)",
                "http.path": "\(path)",
                "http.status": "\(response.status)",
                "account": "\(account?.rawValue ?? "-")",
                "request.id": "\(RequestID.current ?? "-")",
            ])
        return (response, account)
    }

    private func answer(_ request: Request, address: String?, upgrade: String?) async -> (SyncResponse, AccountID?) {
        let admitted = limiter?.enter()
        if admitted == false, let limiter { return (limiter.busyResponse, nil) }
        var handedOver = false
        defer { if admitted == true, !handedOver { limiter?.leave() } }
        let credentials = AuthorizationHeader.credentials(from: request.headers[.authorization])
        var user: String?
        if case .basic(let username, _)? = credentials { user = username }
        if credentials != nil, let wait = loginThrottle?.lockout(user: user, address: address) {
            return (SyncServiceError(
                status: 429, message: "too many failed logins; try again in \(RetryAfterHeader.value(for: wait)) seconds",
                retryAfter: wait
            ).response, nil)
        }
        let body: [UInt8]
        switch await RequestBodyReader.read(request, limit: maxRequestBytes) {
        case .success(let bytes): body = bytes
        case .failure(.tooLarge): return (SyncServiceError.payloadTooLarge(limit: maxRequestBytes).response, nil)
        case .failure(.broken(let error)):
            return (SyncServiceError.badRequest("the request body could not be read: \(error)").response, nil)
        case .failure(.unsupportedCoding(let name)):
            return (SyncServiceError(
                status: 415, message: "Content-Encoding '\(name)' is not one this server reads; send gzip, deflate or identity"
            ).response, nil)
        case .failure(.corrupt(let coding)):
            return (SyncServiceError.badRequest("the request body is not valid \(coding.rawValue), as its Content-Encoding says").response, nil)
        }
        let syncRequest = Self.syncRequest(from: request, credentials: credentials, upgrade: upgrade, body: body)
        let account: AccountID?
        do {
            account = try await authenticator.authenticate(syncRequest.credentials)
        } catch {
            logger.error("authentication failed: \(error)")
            return (SyncServiceError(status: 503, message: "authentication is unavailable").response, nil)
        }
        guard let account else {
            if credentials != nil { loginThrottle?.recordFailure(user: user, address: address) }
            return (SyncServiceError.unauthorized().response, nil)
        }
        loginThrottle?.recordSuccess(user: user)
        guard let limiter, admitted == true else {
            return (await service.respond(to: syncRequest, context: ServiceContext(account: account, requestID: RequestID.current)), account)
        }
        handedOver = true
        let service = self.service
        return (await limiter.run { await service.respond(to: syncRequest, context: ServiceContext(account: account, requestID: RequestID.current)) }, account)
    }

    /// The ``SyncRequest`` a Hummingbird request maps to, with the `credentials` its `Authorization` carries.
    static func syncRequest(from request: Request, credentials: Credentials?, upgrade: String? = nil, body: [UInt8]) -> SyncRequest {
        let headers = request.headers
        let accept = headers[values: .accept]
        return SyncRequest(
            method: SyncRequest.Method(rawValue: request.method.rawValue),
            path: request.head.path ?? "/",
            contentType: headers[.contentType],
            accept: accept.isEmpty ? nil : accept.count == 1 ? accept[0] : accept.joined(separator: ", "),
            credentials: credentials,
            session: SessionCookie.session(fromCookieHeaders: headers[values: .cookie]),
            userAgent: headers[.userAgent],
            device: headers[HeaderFieldNames.deviceToken],
            upgrade: upgrade,
            body: body)
    }

    /// The Hummingbird response a ``SyncResponse`` maps to; its body compressed when it has at least
    /// `threshold` bytes and `acceptEncoding` takes gzip or deflate (with `Vary: Accept-Encoding` on every
    /// answer that size, since the answer depends on it), at zlib's `level`.
    static func httpResponse(
        _ response: SyncResponse, compressedFor acceptEncoding: String? = nil, above threshold: Int? = nil,
        level: Int = ContentCoding.defaultLevel
    ) -> Response {
        var headers = HTTPFields()
        // Which codings request bodies may come in (RFC 7694): clients compress only for a server that says so.
        headers[.acceptEncoding] = "gzip, deflate"
        var body = response.body
        if let threshold, body.count >= threshold {
            headers[.vary] = "Accept-Encoding"
            if let coding = ContentCoding.preferred(acceptEncoding: acceptEncoding), let compressed = try? coding.compress(body, level: level),
                compressed.count < body.count
            {
                headers[.contentEncoding] = coding.rawValue
                body = compressed
            }
        }
        if let contentType = response.contentType { headers[.contentType] = contentType }
        if let session = response.session { headers[.setCookie] = SessionCookie.setCookieValue(for: session) }
        if response.status == 401 { headers[.wwwAuthenticate] = challenge }
        if let retryAfter = response.retryAfter { headers[.retryAfter] = RetryAfterHeader.value(for: retryAfter) }
        let status = HTTPResponse.Status(code: (100...999).contains(response.status) ? response.status : 500)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    private static func pathWithoutQuery(of request: Request) -> Substring {
        SyncRequest.pathWithoutQuery(request.head.path ?? "/")
    }
}

/// The names of the header fields the responder reads and writes that HTTPTypes does not define,
/// made once (a generic type cannot keep them).
private enum HeaderFieldNames {
    /// `X-Request-ID`.
    static let requestID = HTTPFields.Element.Name(RequestID.header)!
    /// `X-Device-Token` (``SyncCore/SyncRequest/device``).
    static let deviceToken = HTTPFields.Element.Name("X-Device-Token")!
}

extension HTTPField.Name {
    /// `X-Frame-Options`.
    fileprivate static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    /// `Referrer-Policy`.
    fileprivate static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
