import SyncCore

/// How the notes client writes a conflict's decision to its store.
///
/// The journal judges a server version that meets a pending change and carries the decision out
/// (``SyncCore/SyncJournal/take(_:pending:policy:writer:)``); whenever that writes a note, it asks
/// this writer. Notes are stored as they travel — neutral records — so SyncCore's
/// ``SyncCore/RecordConflictWriter`` does the writing; the notes stack adds one thing: beside the
/// server's version of a note it keeps the revision it came with, the base of the next local change.
struct NotesConflictWriter: ConflictWriter {
    /// Stamps and stores the versions the device writes again (*mine*, *merged*, the copy of *both*).
    var records: RecordConflictWriter

    /// Stores `version`, a server's version, as the device's copy of the note, with its revision.
    static func store(_ version: ServerVersion, in tx: any StoreTransaction) async throws {
        try await tx.put(version.record)
        try await tx.setMetadata(ServerNote.revision(of: version), DeviceState.revision(of: version.record.id.rawValue))
    }

    /// *Theirs*, the first half of *both*, and a server that already holds the device's version.
    func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
        try await Self.store(remote, in: tx)
    }

    /// *Mine* and *merged*: the note stamped after the server's version, recorded as a local change
    /// based on it (the journal already moved the entry's base to `remote`).
    func writeLocalVersion(
        _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
    ) async throws {
        try await records.writeLocalVersion(version, merged: merged, over: remote, in: tx)
    }

    /// The second half of *both*: the local note as a new note, recorded as an `add`.
    func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
        try await records.writeCopy(of: local, in: tx)
    }
}
