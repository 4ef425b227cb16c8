import GRDB
import Synchronization
import SyncCore

/// The commits of a ``SQLiteStore``, written to the database in groups: the
/// commits that arrive while the writer is busy go into its next SQLite
/// transaction together, so they share one `COMMIT` and one flush to the disk.
///
/// A server with many devices commits many small transactions of different
/// accounts at once; each used to be a transaction of its own, with its own
/// hop to GRDB's writer queue and its own `fdatasync`. Grouped, they take one
/// of each, and nothing else changes for a caller:
/// - A commit whose account another process changed meanwhile
///   (``RevisionConflict``) finds out before it writes anything, and is told
///   so; the others go on. So the commits need no savepoints (releasing one
///   cost SQLite a statement journal and the allocator a trim of its heap, at
///   every commit).
/// - Any other failure (a full disk, a size limit) rolls back the whole group:
///   the commit that met it fails with it, and the others are written again in
///   the next group, so none of them depends on another's fate.
/// - ``commit(_:of:expectedRevision:)`` returns only after the group's
///   transaction committed, as far as the store's durability level says, so a
///   commit reported done is on the disk with everything grouped with it.
///
/// Commits of one account never share a group: a transaction holds its
/// account's lock until its commit returns.
final class GroupCommit: Sendable {
    /// One commit waiting for the writer.
    private struct Waiting: Sendable {
        let writes: PendingWrites
        let account: AccountID
        let expectedRevision: Int64?
        let done: CheckedContinuation<CommittedPositions, any Error>
    }

    private struct Queue {
        var waiting: [Waiting] = []
        /// Whether a writer is scheduled or running; it takes every commit that waits until none is left.
        var isWriting = false
    }

    private let database: any DatabaseWriter
    /// Copies the write-ahead log into the database file; kept here because the writer's connection
    /// calls it after each commit, and every group's work holds this object.
    let checkpointer: LogCheckpointer?
    private let queue = Mutex(Queue())
    /// How many SQLite transactions the groups took so far, those rolled back included.
    let transactionsWritten = Atomic<Int>(0)

    init(database: any DatabaseWriter, checkpointer: LogCheckpointer?) {
        self.database = database
        self.checkpointer = checkpointer
    }

    /// Writes `writes` of `account` with the group the writer takes next, and returns once that group
    /// committed.
    /// - Parameter expectedRevision: The revision the transaction's reads saw, or `nil` when it read nothing.
    /// - Throws: ``RevisionConflict`` when another process committed to the account since, or the
    ///   error that stopped the commit (nothing of it is written then).
    func commit(_ writes: PendingWrites, of account: AccountID, expectedRevision: Int64?) async throws -> CommittedPositions {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<CommittedPositions, any Error>) in
            let startsWriter = queue.withLock { queue in
                queue.waiting.append(Waiting(writes: writes, account: account, expectedRevision: expectedRevision, done: done))
                let writerIsIdle = !queue.isWriting
                queue.isWriting = true
                return writerIsIdle
            }
            if startsWriter {
                database.asyncWriteWithoutTransaction { [self] db in writeWhileWaiting(db) }
            }
        }
    }

    /// Writes groups on the writer's queue until no commit waits.
    private func writeWhileWaiting(_ db: Database) {
        var retried: [Waiting] = []
        while true {
            let group: [Waiting] = queue.withLock { queue in
                let group = retried + queue.waiting
                queue.waiting = []
                if group.isEmpty { queue.isWriting = false }
                return group
            }
            guard !group.isEmpty else { return }
            retried = write(group, db)
        }
    }

    /// Writes `group` in one transaction and resumes the commits it settles; returns those to write again.
    private func write(_ group: [Waiting], _ db: Database) -> [Waiting] {
        var written: [(index: Int, positions: CommittedPositions)] = []
        var conflicted: [Int] = []
        var failure: (index: Int, error: any Error)?
        transactionsWritten.add(1, ordering: .relaxed)
        do {
            try db.inTransaction(.immediate) {
                for (index, member) in group.enumerated() {
                    do {
                        let positions = try StoreQueries.commit(
                            member.writes, of: member.account, expectedRevision: member.expectedRevision, db)
                        written.append((index, positions))
                    } catch is RevisionConflict {
                        // Found before the commit wrote anything: the others go on.
                        conflicted.append(index)
                    } catch {
                        failure = (index, error)
                        return .rollback
                    }
                }
                return .commit
            }
        } catch {
            // The transaction itself failed (its COMMIT, say): nothing of the group is written.
            for member in group { member.done.resume(throwing: error) }
            return []
        }
        for index in conflicted { group[index].done.resume(throwing: RevisionConflict()) }
        guard let failure else {
            for (index, positions) in written { group[index].done.resume(returning: positions) }
            return []
        }
        // Rolled back for one member's failure: that member fails; those written before it, and those
        // not tried yet, go again.
        group[failure.index].done.resume(throwing: failure.error)
        return written.map { group[$0.index] } + group[(failure.index + 1)...]
    }
}
