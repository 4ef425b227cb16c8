import Foundation
import SyncCore

/// How file sync writes a conflict's decision (``SyncCore/ConflictWriter``): the journal judges the
/// server's version against the pending entry and carries out mine, theirs or both
/// (``SyncCore/SyncJournal/take(_:pending:policy:writer:)``); this writer brings the local folder and the
/// cache of what the server held in line, in the same transaction. The transfers that follow — the
/// server's version downloaded, the local copy uploaded — run after the transaction, and a crash between
/// the two resumes from what the cache and the journal say:
///
/// - *theirs*: the cache says the device still holds the version it last had from the server, with the
///   local copy as it is now, so the mirror pass (this sync's or the next) replaces the copy with the
///   server's version, or removes it when the server has none;
/// - *mine*: nothing to write: the entry holds the local copy and is now based on the server's version;
/// - *both*: the local copy moves to its conflict copy's name and is recorded as a new file, and the
///   server's version comes down under the original name.
struct FileConflictWriter: ConflictWriter {
    /// The synced folder.
    let local: LocalFolder
    /// The time of the conflict copy's journal entry.
    let clock: any WallClock
    /// Where *both* puts the local copy.
    let copyPath: String

    func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
        let path = entry.key.id.rawValue
        let cache = Cache(tx)
        if !entry.local.isDeleted, let item = local.item(path), !item.isDirectory {
            try await cache.put(CachedItem(path: path, lastKnown: entry.archCopy, local: item))
        } else {
            // A folder, or an item deleted here: the mirror pass brings back what the server holds.
            try await cache.removeTree(path)
        }
    }

    func writeLocalVersion(
        _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
    ) async throws {
        // The entry already holds the local copy's stamp; a file's bytes cannot be merged, so a merge
        // answer goes up as the local copy too.
    }

    func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
        let path = local.id.rawValue
        let item = self.local.item(path)
        let now = clock.now()
        try await Cache(tx).remove(path)
        try await tx.journal.recordLocalChange(
            .add, local: FolderSync.localRecord(copyPath, item, from: nil, at: now), at: now, basedOn: nil)
        // Last, so that a failed move leaves the transaction to roll back.
        try self.local.move(path, to: copyPath)
    }
}

extension FolderSync.ConflictPolicy: SyncCore.ConflictPolicy {
    /// ``askUser`` defers every conflict to the user; ``keepBoth`` takes the answer that loses nothing
    /// for the question the conflict holds (``answer(to:)``).
    public func resolve(_ conflict: Conflict) async -> Resolution {
        guard case .string(let raw)? = conflict.remote.fields["question"], let kind = FileQuestion.Kind(rawValue: raw),
            let answer = answer(to: kind)
        else { return .deferred }
        switch answer {
        case .keepMine, .merged: return .keepLocal
        case .takeTheirs: return .takeRemote
        case .keepBoth: return .keepBoth
        }
    }

    /// The policy's answer to a question of `kind`, or `nil` when the user answers.
    ///
    /// Under ``keepBoth``: a delete of an item changed on the server restores the server's version; a
    /// change to an item the server deleted or moved, and a folder the server has or refused, keep the
    /// device's side; two versions of a file, or a file and a folder of one name, are both kept.
    public func answer(to kind: FileQuestion.Kind) -> ConflictAnswer? {
        guard self == .keepBoth else { return nil }
        switch kind {
        case .deleteChangedOnServer: return .takeTheirs
        case .deletedOnServerChangedLocally, .moveChangedOnServer, .folderExists, .folderMissing, .folderNotCreated:
            return .keepMine
        case .changedOnBoth, .existsOnServer, .fileExistsForFolder: return .keepBoth
        }
    }
}

extension CachedItem {
    /// The item as the device last had it from the server (`lastKnown`, the entry's ArchCopy; nothing
    /// when it never had one), with the local copy `item` as it is now.
    init(path: String, lastKnown: ServerVersion?, local item: LocalItem) {
        self.path = path
        isDirectory = false
        let fields = lastKnown?.record.fields ?? [:]
        etag = lastKnown?.etag
        if case .string(let id)? = fields["fileid"] { fileID = id }
        if case .date(let date)? = fields["modified"] { modified = date }
        if case .integer(let size)? = fields["size"] { self.size = size }
        localModified = item.modifiedNanoseconds
        localSize = item.size
    }
}
