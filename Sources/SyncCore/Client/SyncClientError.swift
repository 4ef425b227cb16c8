/// Why a client's exchange with a sync service failed, after any retries —
/// or why the service, or the stack's client by the protocol's rules,
/// refused what was asked: the one error every stack's client throws.
///
/// ```swift
/// do {
///     try await client.sync()
/// } catch SyncClientError.unauthorized {
///     askForPassword()
/// } catch let error as SyncClientError where error.code == .refused {
///     print(error.stack ?? "", error.status ?? 0, error.reason ?? "")
///     // ota 611 account ada may hold at most 2 records; this write would make 3
/// } catch let error as SyncClientError {
///     print(error)      // "server failed: GET /rest/booking/list/0: server answered 503: overloaded (after 5 attempts)"
/// }
/// ```
///
/// It carries a ``code`` to branch on, the ``status`` when an answer came, a
/// one-line ``message`` for a person, and the ``underlying`` error (a
/// ``TransportError``, `DecodingError`, ``CodecError``…) when there is one.
///
/// ## Matching a code
/// Every code is also a static member of the error itself
/// (``unauthorized`` is ``Code/unauthorized``), and ``Code/~=(_:_:)`` matches a
/// code against any error, so a `catch` names the code alone:
/// `catch SyncClientError.unauthorized` catches exactly the errors whose
/// ``code`` is ``Code/unauthorized``, and any other error goes on to the next
/// `catch`. The same works in a `switch` over an error, and with
/// `SyncClientError.Code.unauthorized`.
///
/// ## Refusals
/// A protocol that answers in its own terms inside a successful HTTP
/// exchange — OTA's statuses in its messages — refuses with
/// ``Code/refused``, as does a stack's client that refuses a call by its
/// protocol's rules before anything is sent (appSync's primary key held by
/// another local object, 409). Then ``stack`` names the protocol
/// (`"ota"`, `"appsync"`), ``status`` is the protocol's own status (OTA's
/// 611 for `E_LimitExceeded`; appSync's statuses are HTTP's) and ``reason``
/// is the protocol's words for why. An HTTP answer outside 2xx is not a
/// refusal in this sense: it has the code of its status (``Code/rejected``
/// for a 4xx other than 401 and 429) and ``stack`` is `nil`.
public struct SyncClientError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure: compare with `==`, or match an error with ``~=(_:_:)``.
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
        /// The protocol refused what was asked, in its own terms: the server
        /// with a status of the protocol inside its answer (an OTA `E_` status
        /// for a message or a dataclass), or the stack's client, by the
        /// protocol's rules, before sending anything (an appSync object whose
        /// primary key another local object holds). ``SyncClientError/stack``,
        /// ``SyncClientError/status`` and ``SyncClientError/reason`` say which
        /// protocol, its status and why.
        public static let refused = Code("refused")
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

        /// Whether `error` is a ``SyncClientError`` with code `code`: what makes
        /// `catch SyncClientError.unauthorized` (or `catch SyncClientError.Code.unauthorized`) catch
        /// exactly those errors, and `case SyncClientError.unauthorized` match in a `switch` over an error.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? SyncClientError)?.code == code
        }
    }

    /// No answer arrived (``Code/connectionFailed``): `catch SyncClientError.connectionFailed`.
    public static let connectionFailed = Code.connectionFailed
    /// The TLS handshake failed (``Code/tlsFailed``): `catch SyncClientError.tlsFailed`.
    public static let tlsFailed = Code.tlsFailed
    /// The server answered 401 (``Code/unauthorized``): `catch SyncClientError.unauthorized`.
    public static let unauthorized = Code.unauthorized
    /// The server answered 429 (``Code/rateLimited``): `catch SyncClientError.rateLimited`.
    public static let rateLimited = Code.rateLimited
    /// The server answered another 4xx (``Code/rejected``): `catch SyncClientError.rejected`.
    public static let rejected = Code.rejected
    /// The protocol refused what was asked (``Code/refused``): `catch SyncClientError.refused`.
    public static let refused = Code.refused
    /// The server answered 5xx (``Code/serverFailed``): `catch SyncClientError.serverFailed`.
    public static let serverFailed = Code.serverFailed
    /// The answer cannot be read (``Code/invalidResponse``): `catch SyncClientError.invalidResponse`.
    public static let invalidResponse = Code.invalidResponse
    /// The request cannot be made (``Code/invalidRequest``): `catch SyncClientError.invalidRequest`.
    public static let invalidRequest = Code.invalidRequest

    /// The kind of failure.
    public var code: Code
    /// The status of the answer, when one came: HTTP's. When ``stack`` is
    /// set, the protocol's own status: OTA's (604 for `E_NotAllowed`), or
    /// appSync's, which are HTTP's (409 for a primary key held by another
    /// object, also when its client refuses a save without asking the server).
    public var status: Int?
    /// What happened, on one line, for a person.
    public var message: String
    /// The error below, if any.
    public var underlying: (any Error)?
    /// The stack whose protocol refused or failed in its own terms (`"ota"`,
    /// `"appsync"`), as in ``refusal(stack:status:reason:_:)``; `nil` for a
    /// failure of the exchange itself, the same in every stack.
    public var stack: String?
    /// Why the protocol refused, in its words, one line: the server's
    /// description of its status (OTA's, or the status's name when it gave
    /// none), or the rule the client applied; `nil` when ``stack`` is.
    public var reason: String?

    /// Makes an error; line breaks in `message` become spaces.
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - status: The answer's status, when one came (the protocol's own when `stack` is set).
    ///   - message: What happened, for a person.
    ///   - underlying: The error below, if any.
    ///   - stack: The stack whose protocol refused or failed in its own terms.
    ///   - reason: Why, in the protocol's words.
    public init(
        _ code: Code, status: Int? = nil, _ message: String, underlying: (any Error)? = nil, stack: String? = nil,
        reason: String? = nil
    ) {
        self.code = code
        self.status = status
        self.message = Self.oneLine(message)
        self.underlying = underlying
        self.stack = stack
        self.reason = reason.map(Self.oneLine)
    }

    /// A refusal in a protocol's own terms (``Code/refused``).
    /// - Parameters:
    ///   - stack: The stack whose protocol refused: `"ota"`, `"appsync"`, or your own.
    ///   - status: The protocol's status for it (OTA's 611; appSync's 409).
    ///   - reason: Why, in the protocol's words.
    ///   - message: The line for a person; `reason` when `nil`.
    public static func refusal(stack: String, status: Int?, reason: String, _ message: String? = nil) -> SyncClientError {
        SyncClientError(.refused, status: status, message ?? reason, stack: stack, reason: reason)
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
