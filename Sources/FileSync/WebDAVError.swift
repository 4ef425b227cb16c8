public import SyncCore

/// A WebDAV request that failed: no answer, or an answer that refuses it.
///
/// ``kind`` says what the seed's tables call it; ``failureClass`` maps it to
/// the journal's three classes.
public struct WebDAVError: Error, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Sendable, Hashable {
        /// No answer came: no connection, a cut, a time-out. The sync stops: the server cannot be reached.
        case noAnswer = "no answer"
        /// 401: the server refused the credentials. The sync stops: every request would be refused.
        case unauthorized = "credentials refused"
        /// 412: the item is not the version the precondition named (changed on the server).
        case changedOnServer = "changed on the server"
        /// 409: the folder the item goes into does not exist.
        case parentMissing = "target folder missing"
        /// 403 or 405: the server will not do this to the item.
        case notAllowed = "not allowed"
        /// 404: no such item.
        case notFound = "not found"
        /// 423: the item is locked.
        case locked = "locked"
        /// 507: no space left on the server.
        case serverFull = "no space left on the server"
        /// 5xx: the server failed.
        case serverError = "server error"
        /// Another status, or an answer that cannot be read.
        case badAnswer = "unexpected answer"
        /// No space left on the device.
        case deviceFull = "no space left on the device"
        /// A local file could not be read or written.
        case deviceFile = "local file error"
    }

    /// What went wrong.
    public var kind: Kind
    /// The request's method.
    public var method: String
    /// The item's path.
    public var path: String
    /// The server's status, when an answer came.
    public var status: Int?
    /// The details, one line.
    public var detail: String
    /// Whether no connection was made because the server did not take it in time (not a refusal):
    /// the transport tries again for a while.
    var connectionNotTaken = false

    /// Makes an error.
    public init(_ kind: Kind, method: String, path: String, status: Int? = nil, detail: String = "") {
        self.kind = kind
        self.method = method
        self.path = path
        self.status = status
        self.detail = detail
    }

    /// The error an answer with `status` stands for.
    public init(status: Int, method: String, path: String, detail: String = "") {
        let kind: Kind =
            switch status {
            case 401: .unauthorized
            case 412: .changedOnServer
            case 409: .parentMissing
            case 403, 405: .notAllowed
            case 404: .notFound
            case 423: .locked
            case 507: .serverFull
            case 500..<600: .serverError
            default: .badAnswer
            }
        self.init(kind, method: method, path: path, status: status, detail: detail)
    }

    /// The journal's class: a conflict for 412 and 409, refused for 403/404/405,
    /// retry later for everything that may pass (no answer, 423, 507, 5xx, a full device).
    public var failureClass: SyncFailureClass {
        switch kind {
        case .changedOnServer, .parentMissing: .conflict
        case .notAllowed, .notFound, .badAnswer, .deviceFile: .refused
        case .unauthorized: .retryLater
        case .noAnswer, .locked, .serverFull, .serverError, .deviceFull: .retryLater
        }
    }

    /// Whether the whole sync stops at this error, leaving what waits for the next: the server cannot be
    /// reached, did not answer, or refuses the credentials, so further requests would fail alike.
    public var stopsTheSync: Bool { kind == .noAnswer || kind == .unauthorized }

    /// `METHOD path: kind (status): detail`, one line.
    public var description: String {
        var text = "\(method) /\(path): \(kind.rawValue)"
        if let status { text += " (\(status))" }
        if !detail.isEmpty { text += ": " + detail.split(whereSeparator: \.isNewline).joined(separator: " ") }
        return text
    }
}
