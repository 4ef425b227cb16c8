/// The mailbox a connection has selected, as the server last described it.
public struct IMAPSelectedMailbox: Sendable, Hashable {
    /// The mailbox's name.
    public var name: String
    /// `UIDVALIDITY`: when it changes, every UID the device knows is void.
    public var uidValidity: UInt32 = 0
    /// `UIDNEXT`: the UID the next message will get at least.
    public var uidNext: UInt32 = 0
    /// `HIGHESTMODSEQ`, `nil` for a mailbox without (`NOMODSEQ`).
    public var highestModSeq: UInt64?
    /// `EXISTS`: how many messages it holds.
    public var exists: UInt32 = 0
    /// Whether it was opened read-only (EXAMINE).
    public var isReadOnly = false
}

/// A mailbox with its STATUS items, from ``IMAPConnection/list(reference:pattern:status:)``.
public struct IMAPMailboxListing: Sendable, Hashable {
    /// The LIST entry.
    public var entry: IMAPListEntry
    /// The STATUS items asked for (`UIDVALIDITY`, `HIGHESTMODSEQ`, …), when the server sent them.
    public var status: [String: UInt64]
}

/// What a SELECT with QRESYNC (or a CHANGEDSINCE fetch) reported.
public struct IMAPChanges: Sendable, Hashable {
    /// UIDs the server says are gone (`VANISHED`).
    public var vanished: IMAPSequenceSet = IMAPSequenceSet([ClosedRange<UInt32>]())
    /// Messages whose flags (or more) the server sent.
    public var fetches: [IMAPFetch] = []

    /// Changes as given: none by default.
    public init(vanished: IMAPSequenceSet = IMAPSequenceSet([ClosedRange<UInt32>]()), fetches: [IMAPFetch] = []) {
        self.vanished = vanished
        self.fetches = fetches
    }
}

/// The result of a command: what came back untagged while it ran, and its tagged answer.
public struct IMAPCommandResult: Sendable, Hashable {
    /// The untagged responses, in order.
    public var untagged: [IMAPUntagged]
    /// The tagged answer's code.
    public var code: IMAPResponseCode?
    /// The tagged answer's text.
    public var text: String
}
