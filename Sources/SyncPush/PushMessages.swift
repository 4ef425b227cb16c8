#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SyncCore

/// `POST /push/register`: a device names the collections it monitors.
public struct PushRegistration: Codable, Sendable, Hashable {
    /// The device's name for itself, 1–128 characters of `A–Z a–z 0–9 . _ : -`.
    public var deviceToken: String
    /// The collections the device monitors.
    public var collections: [CollectionID]

    /// Makes a registration.
    public init(deviceToken: String, collections: [CollectionID]) {
        self.deviceToken = deviceToken
        self.collections = collections
    }
}

/// The answer to a ``PushRegistration``.
public struct PushRegistrationAnswer: Codable, Sendable, Hashable {
    /// A token for each collection that has push; notifications name the token.
    public var tokens: [String: String]
    /// The collections without push, which the device polls.
    public var poll: [CollectionID]
    /// How often to poll them, in seconds.
    public var pollInterval: Int

    /// Makes an answer.
    public init(tokens: [String: String], poll: [CollectionID], pollInterval: Int) {
        self.tokens = tokens
        self.poll = poll
        self.pollInterval = pollInterval
    }
}

/// One message on the push stream: `{"seq": N, "token": "…", "retained": false}`.
///
/// `seq` grows per device. `retained` is set on the first message after the
/// device was away when the server kept (or dropped) notifications meanwhile:
/// the device then syncs every collection it monitors. `token` is `nil` when
/// the server cannot prove the device missed nothing (it restarted, or the
/// device's `after` is older than its queue).
public struct PushNotification: Codable, Sendable, Hashable {
    /// The notification's number, growing per device.
    public var seq: UInt64
    /// The token of the collection that changed, or `nil` for "sync everything".
    public var token: String?
    /// Whether the device must sync every collection it monitors.
    public var retained: Bool

    /// Makes a notification.
    public init(seq: UInt64, token: String?, retained: Bool) {
        self.seq = seq
        self.token = token
        self.retained = retained
    }

    /// The JSON text sent on the WebSocket, keys sorted; `token` is `null` when there is none.
    public var json: String {
        // The server's tokens are hexadecimal: written directly, as JSONEncoder would write them, since
        // one change can mean thousands of these. Any other token goes through JSONEncoder's escaping.
        guard let token else { return #"{"retained":\#(retained),"seq":\#(seq),"token":null}"# }
        if token.utf8.allSatisfy(Self.isPlainTokenByte) {
            return #"{"retained":\#(retained),"seq":\#(seq),"token":"\#(token)"}"#
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Whether a token's byte needs no escaping in JSON: a letter, a digit, `.`, `_`, `:` or `-`.
    private static func isPlainTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// Reads a message's JSON text.
    /// - Throws: ``PushError`` (``PushError/Code/invalidMessage``) when it is not a notification.
    public init(json: String) throws(PushError) {
        do {
            self = try JSONDecoder().decode(PushNotification.self, from: Data(json.utf8))
        } catch {
            throw PushError(.invalidMessage, "the push stream sent a message that is not {\"seq\",\"token\",\"retained\"}: \(json.prefix(200))")
        }
    }

    private enum CodingKeys: String, CodingKey { case seq, token, retained }

    /// Writes `seq`, `token` (`null` when there is none) and `retained`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seq, forKey: .seq)
        try container.encode(token, forKey: .token)
        try container.encode(retained, forKey: .retained)
    }
}

/// Why the push client could not go on: a ``code`` to branch on and a
/// one-line message a person can act on.
///
/// Match a code in a `catch` (or a `switch` over an error) with the code
/// alone, as every Anchorage error with codes allows:
///
/// ```swift
/// do {
///     try await push.run()
/// } catch PushError.alreadyRunning {
///     // another task runs this client
/// } catch SyncClientError.refused, SyncClientError.rejected {
///     // the server refused the registration: it will not pass by reconnecting
/// }
/// ```
///
/// ``failureClass`` sorts it into the journal's three classes; the
/// ``PushClient`` reconnects after a failure that may pass and stops at one
/// that will not.
public struct PushError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure: compare with `==`, or match an error with ``~=(_:_:)``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The push stream sent a message that is not a notification (`{"seq", "token", "retained"}`).
        /// It may pass: the client reconnects, and the server replays what the device has not received.
        public static let invalidMessage = Code("invalid message")
        /// The server's address makes no WebSocket address for the push stream. It will not pass.
        public static let invalidServer = Code("invalid server address")
        /// ``PushClient/run()`` was called while the same client runs.
        public static let alreadyRunning = Code("already running")
        /// The code's name.
        public var description: String { name }

        /// Whether `error` is a ``PushError`` with code `code`: what makes `catch PushError.invalidMessage`
        /// (or `catch PushError.Code.invalidMessage`) catch exactly those errors.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? PushError)?.code == code
        }
    }

    /// The stream sent a message that is not a notification (``Code/invalidMessage``): `catch PushError.invalidMessage`.
    public static let invalidMessage = Code.invalidMessage
    /// The server's address makes no stream address (``Code/invalidServer``): `catch PushError.invalidServer`.
    public static let invalidServer = Code.invalidServer
    /// The client already runs (``Code/alreadyRunning``): `catch PushError.alreadyRunning`.
    public static let alreadyRunning = Code.alreadyRunning

    /// The kind of failure.
    public var code: Code
    /// What went wrong, one line.
    public var message: String

    /// Makes an error of kind `code`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The journal's class of the failure: retry later for a message that is not a notification,
    /// which may pass; refused for an address that makes no stream address and a client that
    /// already runs, which another attempt does not change.
    public var failureClass: SyncFailureClass {
        code == .invalidMessage ? .retryLater : .refused
    }

    /// The message.
    public var description: String { message }
}

/// Checks a device token: 1–128 characters of `A–Z a–z 0–9 . _ : -`.
enum DeviceToken {
    static let maxLength = 128

    static func isValid(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= maxLength
            && token.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
            }
    }
}
