/// A request from a sync client to a sync service: the parts of HTTP the
/// stacks use, typed, whether it travels over HTTP or in-process.
public struct SyncRequest: Sendable, Hashable {
    /// The request method.
    public var method: Method
    /// The path, with the query string if any: `/deltas/from:42?deviceToken=abc`.
    public var path: String
    /// The media type of ``body``, if it has one.
    public var contentType: String?
    /// The media types the client accepts for the answer, as in HTTP's `Accept`.
    public var accept: String?
    /// The credentials the client presents.
    public var credentials: Credentials?
    /// The session the client continues (OTA's `ota-session` cookie), if any.
    public var session: String?
    /// The client implementation, as in HTTP's `User-Agent`.
    public var userAgent: String?
    /// The device the request comes from, as it names itself to a push server
    /// (HTTP's `X-Device-Token`), so that the server does not notify it of its own writes.
    public var device: String?
    /// The protocol the client asks to switch to on the connection (HTTP's `Upgrade`, such as
    /// `websocket`), which a server sets only on a request it can upgrade; `nil` for an ordinary request.
    /// A service grants it by answering `101`.
    public var upgrade: String?
    /// The body.
    public var body: [UInt8]

    /// Makes a request.
    public init(
        method: Method,
        path: String,
        contentType: String? = nil,
        accept: String? = nil,
        credentials: Credentials? = nil,
        session: String? = nil,
        userAgent: String? = nil,
        device: String? = nil,
        upgrade: String? = nil,
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.contentType = contentType
        self.accept = accept
        self.credentials = credentials
        self.session = session
        self.userAgent = userAgent
        self.device = device
        self.upgrade = upgrade
        self.body = body
    }

    /// The path without the query string.
    public var pathWithoutQuery: Substring { Self.pathWithoutQuery(path) }

    /// `path` up to its query string (`?…`), if it has one.
    public static func pathWithoutQuery(_ path: String) -> Substring {
        // `?` is one byte in UTF-8, so its index is a character boundary of `path`.
        guard let queryStart = path.utf8.firstIndex(of: UInt8(ascii: "?")) else { return path[...] }
        return path[..<queryStart]
    }

    /// The decoded query parameters (`a=1&b=2`); a repeated name keeps its last value.
    public var queryItems: [String: String] {
        guard let queryStart = path.utf8.firstIndex(of: UInt8(ascii: "?")) else { return [:] }
        var items: [String: String] = [:]
        // `&` and `=` are one byte each in UTF-8: the pieces between them are whole characters.
        for pair in path.utf8[path.utf8.index(after: queryStart)...].split(separator: UInt8(ascii: "&")) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let name = PercentEncoding.decode(Substring(pair[..<(equals ?? pair.endIndex)]))
            let value = equals.map { PercentEncoding.decode(Substring(pair[pair.index(after: $0)...])) } ?? ""
            items[name] = value
        }
        return items
    }

    /// An HTTP request method.
    public struct Method: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The method's name, upper case.
        public var rawValue: String
        /// Makes a method.
        public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
        /// `GET`.
        public static let get = Method(rawValue: "GET")
        /// `POST`.
        public static let post = Method(rawValue: "POST")
        /// `PUT`.
        public static let put = Method(rawValue: "PUT")
        /// `DELETE`.
        public static let delete = Method(rawValue: "DELETE")
        /// Whether HTTP defines the method as idempotent — sending a request
        /// twice does no more than sending it once: `GET`, `HEAD`, `PUT`,
        /// `DELETE`, `OPTIONS` and `TRACE`, not `POST`.
        public var isIdempotent: Bool {
            ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains(rawValue)
        }
        /// The method's name.
        public var description: String { rawValue }
    }
}

/// The answer of a sync service.
public struct SyncResponse: Sendable, Hashable {
    /// The HTTP status code: 200, 204, 400, 401, 404, 413, 415, 422, 500…
    public var status: Int
    /// The media type of ``body``, if it has one.
    public var contentType: String?
    /// A session the client should continue in its next request (sent as a cookie over HTTP).
    public var session: String?
    /// How long the client should wait before it asks again, with a 429 or a
    /// 503 (HTTP's `Retry-After`, in whole seconds on the wire).
    public var retryAfter: Duration?
    /// The body.
    public var body: [UInt8]

    /// Makes a response.
    public init(
        status: Int, contentType: String? = nil, session: String? = nil, retryAfter: Duration? = nil,
        body: [UInt8] = []
    ) {
        self.status = status
        self.contentType = contentType
        self.session = session
        self.retryAfter = retryAfter
        self.body = body
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// A response carrying `value` encoded with `codec`.
    /// - Throws: ``CodecError`` when the value cannot be encoded.
    public static func encoded(
        _ value: SyncValue, with codec: any SyncCodec, status: Int = 200, session: String? = nil
    ) throws(CodecError) -> SyncResponse {
        SyncResponse(status: status, contentType: codec.primaryMediaType, session: session, body: try codec.encode(value))
    }

    /// A plain-text response, for errors outside any codec.
    public static func text(_ text: String, status: Int) -> SyncResponse {
        SyncResponse(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))
    }
}

/// What a client presents to prove who it is.
public enum Credentials: Sendable, Hashable {
    /// HTTP Basic: a user name and a password.
    case basic(username: String, password: String)
    /// A bearer token.
    case bearer(String)
}

/// Percent-decoding for paths and query strings.
public enum PercentEncoding {
    /// Decodes `%XX` escapes and `+` (as a space); invalid escapes are kept as written.
    public static func decode(_ text: some StringProtocol) -> String {
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let high = hexValue(iterator[iterator.startIndex]),
                let low = hexValue(iterator[iterator.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                iterator.removeFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Encodes every byte outside `A–Z a–z 0–9 - . _ ~` as `%XX`.
    public static func encode(_ text: some StringProtocol) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                result += "%"
                result.unicodeScalars.append(hex[Int(byte >> 4)])
                result.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
