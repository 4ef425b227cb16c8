import SyncCore

// The notes protocol on the wire. Every message is `Codable`: the server reads
// and writes them through `SyncValueEncoder` / `SyncValueDecoder` and a codec,
// the client through `SyncEndpoint`, so any codec carries them.
//
//   GET  {mount}/changes?after={revision}  →  ChangesAnswer
//   POST {mount}/push   PushRequest        →  PushAnswer
//
// A note's *revision* is the position of its last write in the server store's
// change sequence: it grows with every write, so "the changes after revision
// R" and "the version this edit was based on" are the same kind of number.

/// A note as the server has it, with its revision.
struct ServerNote: Codable, Sendable, Hashable {
    var note: Note
    var revision: ChangePosition

    /// The note as the device's journal keeps a server's version: the record, with the revision as
    /// the server's version token.
    var version: ServerVersion {
        ServerVersion(record: note.record, token: .integer(Int64(revision.rawValue)))
    }

    /// The revision a server's version carries as its token; `.start` when there is none (the
    /// server never had the note).
    static func revision(of version: ServerVersion?) -> ChangePosition {
        ChangePosition(UInt64(max(0, version?.token?.integerValue ?? 0)))
    }
}

/// One page of the server's changes.
struct ChangesAnswer: Codable, Sendable {
    var notes: [ServerNote]
    /// Ask after this revision next time.
    var cursor: ChangePosition
    /// Whether more changes follow this page.
    var more: Bool
}

/// A device's local change: the note as the device has it now, and the
/// revision it was based on (`.start` for a note the server has never seen).
struct NoteChange: Codable, Sendable, Hashable {
    var note: Note
    var base: ChangePosition
}

/// The body of a push: the device's changes.
struct PushRequest: Codable, Sendable {
    var changes: [NoteChange]
}

/// The answer to a push: the server's copy of every note pushed, after the
/// push, and how many of them conflicted.
struct PushAnswer: Codable, Sendable {
    var notes: [ServerNote]
    var conflicts: Int
}
