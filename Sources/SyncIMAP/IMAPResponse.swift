public import SyncCore

/// Why an IMAP exchange could not go on: a one-line message a person can act on.
public struct IMAPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, to branch on (`catch IMAPError.Code.connectionFailed`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// No connection could be made: refused, unreachable, no address, no greeting in time.
        public static let connectionFailed = Code("connection failed")
        /// The connection broke, or the server closed it (BYE), in the middle of the work; a new one may do.
        public static let connectionLost = Code("connection lost")
        /// The TLS handshake failed, or STARTTLS is not offered where it is required.
        public static let tlsFailed = Code("TLS failed")
        /// The server refused the user's credentials.
        public static let authenticationFailed = Code("authentication failed")
        /// The server answered a command with NO or BAD.
        public static let commandFailed = Code("command failed")
        /// The server sent something this client does not read, or more than its limits.
        public static let invalidResponse = Code("invalid response")
        /// The code's name.
        public var description: String { name }

        /// Whether `error` is an ``IMAPError`` with this code: `catch IMAPError.Code.connectionLost`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? IMAPError)?.code == code
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, one line.
    public var message: String
    /// Makes an error of kind `code`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    /// Makes an error about what the server sent (``Code/invalidResponse``).
    public init(_ message: String) { self.init(.invalidResponse, message) }
    /// The message.
    public var description: String { message }

    /// The journal's class of the failure (docs/journal.md, "three classes"): no connection, a lost one or
    /// refused credentials may pass (retry later, every change kept); a failed TLS handshake, a command
    /// the server refused or an answer this client cannot read will not pass by trying again (refused).
    public var failureClass: SyncFailureClass {
        switch code {
        case .connectionFailed, .connectionLost, .authenticationFailed: .retryLater
        default: .refused
        }
    }

    /// Whether a new connection may do: the connection could not be made or was lost. A mailbox
    /// reconnects on these as its ``SyncCore/RetryPolicy`` says; refused credentials are retried by the
    /// next sync, not at once.
    public var isTransient: Bool { code == .connectionFailed || code == .connectionLost }
}

/// A value of an IMAP response in its raw form: an atom, a string (quoted or a literal), `NIL`, or a list.
public indirect enum IMAPValue: Sendable, Hashable, CustomStringConvertible {
    /// An atom or a number, as sent (`\Seen`, `42`, `BODY[]`).
    case atom(String)
    /// A quoted string or a literal's bytes.
    case string([UInt8])
    /// `NIL`.
    case `nil`
    /// A parenthesized list.
    case list([IMAPValue])

    /// The atom's or the string's text; `nil` for `NIL` and lists.
    public var text: String? {
        switch self {
        case .atom(let atom): atom
        case .string(let bytes): String(decoding: bytes, as: UTF8.self)
        case .nil, .list: nil
        }
    }

    /// The value as a number, when it is an atom made of digits.
    public var number: UInt64? {
        guard case .atom(let atom) = self, !atom.isEmpty, atom.utf8.count <= 20, atom.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            return nil
        }
        return UInt64(atom)
    }

    /// The list's items; `nil` when this is no list.
    public var items: [IMAPValue]? {
        if case .list(let items) = self { items } else { nil }
    }

    /// The value as IMAP writes it (strings quoted, whatever their origin).
    public var description: String {
        switch self {
        case .atom(let atom): atom
        case .string(let bytes): "\"" + String(decoding: bytes, as: UTF8.self).replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        case .nil: "NIL"
        case .list(let items): "(" + items.map(\.description).joined(separator: " ") + ")"
        }
    }
}

/// The status of a tagged or untagged condition response.
public enum IMAPStatus: String, Sendable, Hashable {
    /// `OK`.
    case ok = "OK"
    /// `NO`: the command failed.
    case no = "NO"
    /// `BAD`: the command was not understood.
    case bad = "BAD"
    /// `PREAUTH`: the greeting of a connection already authenticated.
    case preauth = "PREAUTH"
    /// `BYE`: the server closes the connection.
    case bye = "BYE"
}

/// A response code: the bracketed part of a status response (`[UIDVALIDITY 3857529045]`).
public enum IMAPResponseCode: Sendable, Hashable {
    /// `UIDVALIDITY n`.
    case uidValidity(UInt32)
    /// `UIDNEXT n`.
    case uidNext(UInt32)
    /// `HIGHESTMODSEQ n`.
    case highestModSeq(UInt64)
    /// `NOMODSEQ`: the mailbox keeps no modification sequences.
    case noModSeq
    /// `APPENDUID validity uid`.
    case appendUID(uidValidity: UInt32, uids: IMAPSequenceSet)
    /// `COPYUID validity from to`.
    case copyUID(uidValidity: UInt32, from: IMAPSequenceSet, to: IMAPSequenceSet)
    /// `PERMANENTFLAGS (…)`.
    case permanentFlags([String])
    /// `READ-WRITE`.
    case readWrite
    /// `READ-ONLY`.
    case readOnly
    /// `CLOSED`: the previously selected mailbox is closed.
    case closed
    /// `CAPABILITY …`.
    case capability([String])
    /// `MODIFIED set`: messages a conditional store did not change.
    case modified(IMAPSequenceSet)
    /// Any other code, with its arguments' text.
    case other(String, String?)
}

/// One message's data in a FETCH response.
public struct IMAPFetch: Sendable, Hashable {
    /// The message's sequence number.
    public var sequence: UInt32
    /// `UID`.
    public var uid: UInt32?
    /// `FLAGS`.
    public var flags: [String]?
    /// `MODSEQ`.
    public var modSeq: UInt64?
    /// `BODY[…]` sections by their name as sent (`BODY[]`, `BODY[HEADER]`); a `NIL` section is absent.
    public var sections: [String: [UInt8]] = [:]
    /// Every other item, by its upper-cased name.
    public var other: [String: IMAPValue] = [:]

    /// Makes an empty FETCH of message `sequence`.
    public init(sequence: UInt32) { self.sequence = sequence }

    /// The whole message (`BODY[]` or `RFC822`), when fetched.
    public var body: [UInt8]? { sections["BODY[]"] ?? sections["RFC822"] }
}

/// A mailbox in a LIST response.
public struct IMAPListEntry: Sendable, Hashable {
    /// The attributes (`\HasNoChildren`, `\Noselect`).
    public var attributes: [String]
    /// The hierarchy delimiter, `nil` for a flat name space.
    public var delimiter: String?
    /// The mailbox's name, decoded from modified UTF-7.
    public var name: String

    /// Makes an entry.
    public init(attributes: [String], delimiter: String?, name: String) {
        self.attributes = attributes
        self.delimiter = delimiter
        self.name = name
    }

    /// Whether the mailbox can be selected.
    public var isSelectable: Bool {
        !attributes.contains { ["\\noselect", "\\nonexistent"].contains($0.lowercased()) }
    }
}

/// A response without a tag.
public enum IMAPUntagged: Sendable, Hashable {
    /// `* OK|NO|BAD|PREAUTH|BYE [code] text`.
    case condition(IMAPStatus, IMAPResponseCode?, String)
    /// `* CAPABILITY …`.
    case capability([String])
    /// `* ENABLED …`.
    case enabled([String])
    /// `* FLAGS (…)`.
    case flags([String])
    /// `* LIST (…) "." name`.
    case list(IMAPListEntry)
    /// `* STATUS name (ITEM n …)`, items upper-cased.
    case status(String, [String: UInt64])
    /// `* n EXISTS`.
    case exists(UInt32)
    /// `* n RECENT`.
    case recent(UInt32)
    /// `* n EXPUNGE` (a sequence number).
    case expunge(UInt32)
    /// `* VANISHED [(EARLIER)] uids`.
    case vanished(earlier: Bool, IMAPSequenceSet)
    /// `* n FETCH (…)`.
    case fetch(IMAPFetch)
    /// `* SEARCH n… [(MODSEQ m)]`.
    case search([UInt32], modSeq: UInt64?)
    /// `* METADATA mailbox (entry value …)`; a value is `nil` for `NIL` (and in the unsolicited form, which names entries only).
    case metadata(String, [String: String?])
    /// Any other response: its upper-cased name and its values.
    case other(String, [IMAPValue])
}

/// One response from the server.
public enum IMAPResponse: Sendable, Hashable {
    /// `tag OK|NO|BAD [code] text`: the end of a command.
    case tagged(tag: String, status: IMAPStatus, code: IMAPResponseCode?, text: String)
    /// `* …`.
    case untagged(IMAPUntagged)
    /// `+ text`: the server waits for the rest of the command.
    case continuation(String)
}
