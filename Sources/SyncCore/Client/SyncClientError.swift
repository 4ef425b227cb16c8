/// Why a client's exchange with a sync service failed, after any retries:
/// the one error ``SyncEndpoint`` throws, whatever the stack.
///
/// ```swift
/// do {
///     try await client.sync()
/// } catch let error as SyncClientError where error.code == .unauthorized {
///     askForPassword()
/// } catch let error as SyncClientError {
///     print(error)      // "GET /rest/booking/list/0: server answered 503: overloaded (after 5 attempts)"
/// }
/// ```
///
/// It carries a ``code`` to branch on, the HTTP ``status`` when an answer
/// came, a one-line ``message`` for a person, and the ``underlying`` error
/// (a ``TransportError``, `DecodingError`, ``CodecError``…) when there is one.
public struct SyncClientError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// No answer arrived: the connection failed, was cut or timed out.
        public static let connectionFailed = Code("connection failed")
        /// No connection was made because its TLS handshake failed: most often
        /// the server's certificate is not signed by an authority the client
        /// trusts, or does not name the server. Not retried.
        public static let tlsFailed = Code("TLS failed")
        /// The server answered 401: no credentials, or wrong ones.
        public static let unauthorized = Code("unauthorized")
        /// The server answered 429: too many requests.
        public static let rateLimited = Code("rate limited")
        /// The server answered with another status outside 2xx below 500: it refused the request.
        public static let rejected = Code("rejected")
        /// The server answered 5xx: it failed or is unavailable.
        public static let serverFailed = Code("server failed")
        /// The answer cannot be read: not valid HTTP, an unknown content type,
        /// bytes its codec cannot decode, or content that does not fit the
        /// message type.
        public static let invalidResponse = Code("invalid response")
        /// The request cannot be made: its body cannot be encoded.
        public static let invalidRequest = Code("invalid request")
        /// The code's name.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// The HTTP status of the answer, when one came.
    public var status: Int?
    /// What happened, on one line, for a person.
    public var message: String
    /// The error below, if any.
    public var underlying: (any Error)?

    /// Makes an error; line breaks in `message` become spaces.
    public init(_ code: Code, status: Int? = nil, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.status = status
        self.message = Self.oneLine(message)
        self.underlying = underlying
    }

    /// The code for an answer's status outside 2xx.
    public static func code(forStatus status: Int) -> Code {
        switch status {
        case 401: .unauthorized
        case 429: .rateLimited
        case 500...: .serverFailed
        default: .rejected
        }
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }

    private static func oneLine(_ text: String) -> String {
        var line = ""
        var lastWasSpace = false
        for character in text {
            let isSpace = character.isNewline || character == "\t"
            if isSpace {
                if !lastWasSpace { line.append(" ") }
            } else {
                line.append(character)
            }
            lastWasSpace = isSpace
        }
        return line
    }
}
