public import SyncCore

/// A WebDAV request that failed: no answer, or an answer that refuses it.
///
/// ``code`` says what the seed's tables call it, and can be caught by itself;
/// ``failureClass`` maps it to the journal's three classes.
///
/// ```swift
/// do {
///     try await client.upload(from: file, to: "notes.txt", precondition: .etag(etag))
/// } catch WebDAVError.Code.changedOnServer {
///     // someone else wrote it since: ask
/// } catch let error as WebDAVError where error.stopsTheSync {
///     print(error.detail)   // "cannot connect to files.example.com:443: connection refused"
/// }
/// ```
public struct WebDAVError: Error, Hashable, CustomStringConvertible {
    /// The kind of failure, to branch on (`catch WebDAVError.Code.notFound`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// No answer came: no connection, a cut, a time-out, or an answer that is not HTTP. The sync stops:
        /// the server cannot be reached.
        public static let noAnswer = Code("no answer")
        /// The TLS handshake failed: the server's certificate is not trusted or does not name the server.
        /// The sync stops: every request would fail alike.
        public static let tlsFailed = Code("TLS failed")
        /// 401: the server refused the credentials. The sync stops: every request would be refused.
        public static let unauthorized = Code("credentials refused")
        /// 412: the item is not the version the precondition named (changed on the server).
        public static let changedOnServer = Code("changed on the server")
        /// 409: the folder the item goes into does not exist.
        public static let parentMissing = Code("target folder missing")
        /// 403 or 405: the server will not do this to the item.
        public static let notAllowed = Code("not allowed")
        /// 404: no such item.
        public static let notFound = Code("not found")
        /// 423: the item is locked.
        public static let locked = Code("locked")
        /// 429: the server asks the client to slow down.
        public static let rateLimited = Code("too many requests")
        /// 507: no space left on the server.
        public static let serverFull = Code("no space left on the server")
        /// 5xx: the server failed.
        public static let serverError = Code("server error")
        /// Another status, or an answer that cannot be read.
        public static let badAnswer = Code("unexpected answer")
        /// No space left on the device.
        public static let deviceFull = Code("no space left on the device")
        /// A local file could not be read or written.
        public static let deviceFile = Code("local file error")
        /// The code's name: `not found`.
        public var description: String { name }

        /// Whether `error` is a ``WebDAVError`` with this code: `catch WebDAVError.Code.notFound`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? WebDAVError)?.code == code
        }
    }

    /// The kind of failure (the name it had before ``Code``).
    @available(*, deprecated, renamed: "Code")
    public typealias Kind = Code

    /// The kind of failure.
    public var code: Code
    /// The request's method.
    public var method: String
    /// The item's path.
    public var path: String
    /// The server's status, when an answer came.
    public var status: Int?
    /// The details, one line.
    public var detail: String
    /// Whether the same request may be sent again after this failure, when its class is retry later.
    var resend: Resend = .no

    /// Whether a failed request may be sent again.
    enum Resend: Hashable, Sendable {
        /// No: sending again meets the same failure, or may do harm.
        case no
        /// Any request: it never reached the server (no connection was made).
        case any
        /// A request that only reads: it may have reached the server, whose answer was lost.
        case readsOnly
    }

    /// The kind of failure (the name it had before ``code``).
    @available(*, deprecated, renamed: "code")
    public var kind: Code {
        get { code }
        set { code = newValue }
    }

    /// Makes an error.
    public init(_ code: Code, method: String, path: String, status: Int? = nil, detail: String = "") {
        self.code = code
        self.method = method
        self.path = path
        self.status = status
        self.detail = detail
    }

    /// The error an answer with `status` stands for.
    public init(status: Int, method: String, path: String, detail: String = "") {
        let code: Code =
            switch status {
            case 401: .unauthorized
            case 412: .changedOnServer
            case 409: .parentMissing
            case 403, 405: .notAllowed
            case 404: .notFound
            case 423: .locked
            case 429: .rateLimited
            case 507: .serverFull
            case 500..<600: .serverError
            default: .badAnswer
            }
        self.init(code, method: method, path: path, status: status, detail: detail)
    }

    /// The journal's class: a conflict for 412 and 409, refused for 403/404/405 and answers that cannot be
    /// read, retry later for everything that may pass (no answer, a failed TLS handshake, 401, 423, 429,
    /// 507, 5xx, a full device).
    public var failureClass: SyncFailureClass {
        switch code {
        case .changedOnServer, .parentMissing: .conflict
        case .notAllowed, .notFound, .badAnswer, .deviceFile: .refused
        default: .retryLater
        }
    }

    /// Whether the whole sync stops at this error, leaving what waits for the next: the server cannot be
    /// reached (``Code/noAnswer``, ``Code/tlsFailed``) or refuses the credentials (``Code/unauthorized``),
    /// so further requests would fail alike.
    public var stopsTheSync: Bool { code == .noAnswer || code == .tlsFailed || code == .unauthorized }

    /// `METHOD /path: code (status): detail`, one line.
    public var description: String {
        var text = "\(method) /\(path): \(code)"
        if let status { text += " (\(status))" }
        if !detail.isEmpty { text += ": " + detail.split(whereSeparator: \.isNewline).joined(separator: " ") }
        return text
    }
}
