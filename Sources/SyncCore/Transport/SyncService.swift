/// The server side of a sync protocol: answers requests for an authenticated account.
///
/// A stack's server is a `SyncService`; ``ServiceRouter`` mounts several under
/// path prefixes, and a transport adapter (the Hummingbird adapter in
/// `SyncHTTPServer`, or ``LoopbackTransport``) authenticates each request and calls
/// ``handle(_:context:)``. The service sees the account only through
/// ``ServiceContext/account``, never from the request body.
///
/// A service answers protocol errors itself, with the protocol's own statuses;
/// anything it throws becomes a ``SyncServiceError`` status (or 500).
public protocol SyncService: Sendable {
    /// Answers one request.
    /// - Throws: ``SyncServiceError`` for an HTTP error status; any other error becomes 500.
    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse
}

/// What a service knows about a request beyond its contents.
public struct ServiceContext: Sendable, Hashable {
    /// The authenticated account the request acts for.
    public var account: AccountID
    /// The path prefix the service is mounted under (`/ota`), empty at the root.
    public var mountPath: String
    /// The request's id (the HTTP server's `X-Request-ID`), for log lines about it; `nil` when the transport has none.
    public var requestID: String?

    /// Makes a context.
    public init(account: AccountID, mountPath: String = "", requestID: String? = nil) {
        self.account = account
        self.mountPath = mountPath
        self.requestID = requestID
    }
}

/// Wraps a service: logging, metrics, limits, authorization checks.
public protocol SyncServiceMiddleware: Sendable {
    /// Handles `request`, usually by calling `next`.
    func intercept(
        _ request: SyncRequest,
        context: ServiceContext,
        next: @Sendable (SyncRequest, ServiceContext) async throws -> SyncResponse
    ) async throws -> SyncResponse
}

extension SyncService {
    /// This service with `middleware` in front of it.
    public func with(_ middleware: any SyncServiceMiddleware) -> MiddlewareService {
        MiddlewareService(base: self, middleware: middleware)
    }

    /// Calls the service and turns what it throws into an answer: a
    /// ``SyncServiceError`` into its status, a ``CodecError`` into 400,
    /// a ``StoreError`` with code ``StoreError/Code/quotaExceeded`` into 507, anything else into 500.
    public func respond(to request: SyncRequest, context: ServiceContext) async -> SyncResponse {
        do {
            return try await handle(request, context: context)
        } catch let error as SyncServiceError {
            return error.response
        } catch let error as CodecError {
            return SyncServiceError(status: 400, message: error.description).response
        } catch let error as StoreError where error.code == .quotaExceeded {
            return SyncServiceError.insufficientStorage(error.message).response
        } catch {
            return SyncServiceError(status: 500, message: "internal error: \(error)").response
        }
    }
}

/// A service with a middleware in front of it.
public struct MiddlewareService: SyncService {
    /// The wrapped service.
    public let base: any SyncService
    /// The middleware.
    public let middleware: any SyncServiceMiddleware

    /// Puts `middleware` in front of `base`.
    public init(base: any SyncService, middleware: any SyncServiceMiddleware) {
        self.base = base
        self.middleware = middleware
    }

    /// Passes the request through the middleware to the service.
    public func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        let base = self.base
        return try await middleware.intercept(request, context: context) { try await base.handle($0, context: $1) }
    }
}

/// An HTTP error status a service answers with, and a message for the client.
///
/// Its ``response`` is a small JSON body — `{"error": "...", "message": "..."}`,
/// plus `"supported"` for 415 — that every client can read whatever codec it speaks.
public struct SyncServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status.
    public var status: Int
    /// What went wrong.
    public var message: String
    /// For 415, the media types the service reads.
    public var supportedMediaTypes: [String]
    /// For 429 and 503, how long the client should wait before it asks again.
    public var retryAfter: Duration?

    /// Makes an error.
    public init(status: Int, message: String, supportedMediaTypes: [String] = [], retryAfter: Duration? = nil) {
        self.status = status
        self.message = message
        self.supportedMediaTypes = supportedMediaTypes
        self.retryAfter = retryAfter
    }

    /// 400: the request is malformed.
    public static func badRequest(_ message: String) -> SyncServiceError { .init(status: 400, message: message) }
    /// 401: no or wrong credentials.
    public static func unauthorized(_ message: String = "authentication required") -> SyncServiceError {
        .init(status: 401, message: message)
    }
    /// 404: nothing at this path.
    public static func notFound(_ message: String) -> SyncServiceError { .init(status: 404, message: message) }
    /// 405: the path exists, the method does not.
    public static func methodNotAllowed(_ message: String) -> SyncServiceError { .init(status: 405, message: message) }
    /// 413: the request body is larger than the service accepts.
    public static func payloadTooLarge(limit: Int) -> SyncServiceError {
        .init(status: 413, message: "request body larger than \(limit) bytes")
    }
    /// 415: no codec reads the request's media type.
    public static func unsupportedMediaType(_ mediaType: String, supported: [String]) -> SyncServiceError {
        .init(
            status: 415,
            message: "unsupported content type '\(mediaType)'; supported: \(supported.joined(separator: ", "))",
            supportedMediaTypes: supported)
    }
    /// 422: well-formed but invalid content.
    public static func unprocessable(_ message: String) -> SyncServiceError { .init(status: 422, message: message) }
    /// 507: storing the request would take the account over its quota; nothing of it was stored.
    public static func insufficientStorage(_ message: String) -> SyncServiceError { .init(status: 507, message: message) }

    /// A short name for the status, used as `error` in the body.
    public var reason: String {
        switch status {
        case 400: "bad_request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 408: "request_timeout"
        case 409: "conflict"
        case 413: "payload_too_large"
        case 415: "unsupported_media_type"
        case 422: "validation_error"
        case 426: "upgrade_required"
        case 429: "too_many_requests"
        case 503: "service_unavailable"
        case 507: "insufficient_storage"
        default: status >= 500 ? "internal_error" : "error"
        }
    }

    /// The error as a JSON response.
    public var response: SyncResponse {
        var body = "{\"error\":\(Self.jsonString(reason)),\"message\":\(Self.jsonString(message))"
        if !supportedMediaTypes.isEmpty {
            body += ",\"supported\":[" + supportedMediaTypes.map(Self.jsonString).joined(separator: ",") + "]"
        }
        body += "}"
        return SyncResponse(status: status, contentType: "application/json", retryAfter: retryAfter, body: Array(body.utf8))
    }

    /// `status reason: message`.
    public var description: String { "\(status) \(reason): \(message)" }

    private static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// Mounts services under path prefixes: `/ota`, `/rest`, `/deltas`.
///
/// ```swift
/// let router = ServiceRouter()
///     .mounting(otaServer, at: "/ota")
///     .mounting(appSyncServer, at: "/rest")
/// ```
/// The longest matching prefix wins; a request no prefix matches gets 404.
public struct ServiceRouter: SyncService {
    private var mounts: [(prefix: String, service: any SyncService)] = []

    /// Makes an empty router.
    public init() {}

    /// The router with `service` mounted at `prefix` (which starts with `/`).
    public func mounting(_ service: any SyncService, at prefix: String) -> ServiceRouter {
        var copy = self
        let normalized = prefix.count > 1 && prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        copy.mounts.append((normalized, service))
        copy.mounts.sort { $0.prefix.count > $1.prefix.count }
        return copy
    }

    /// The prefixes mounted, longest first.
    public var mountedPrefixes: [String] { mounts.map(\.prefix) }

    /// Forwards to the service of the longest matching prefix.
    public func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        let path = request.pathWithoutQuery
        for mount in mounts
        where mount.prefix == "/" || path == mount.prefix || path.hasPrefix(mount.prefix + "/")
            || path.hasPrefix(mount.prefix + ":")
        {
            var context = context
            context.mountPath = mount.prefix == "/" ? "" : mount.prefix
            return try await mount.service.handle(request, context: context)
        }
        throw SyncServiceError.notFound("no service at \(path)")
    }
}
