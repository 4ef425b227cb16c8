import GRDB
import GRDBSQLite
import Synchronization

/// Copies a file store's write-ahead log into the database file mostly beside the commits, so that the
/// commit that fills the log waits for a small part of the copy only.
///
/// SQLite's automatic checkpoint runs inside the commit that brings the log to its mark: that commit,
/// and every one queued behind it, waits while the pages written since the last copy are copied and
/// the file is flushed (some 16 ms of every 0.6 s on a busy server, in the tail of every sync
/// then in flight). Here the writer's connection looks at the log's size after each commit (SQLite's
/// write-ahead-log hook, which takes the place of `wal_autocheckpoint`'s):
/// - at every eighth of ``SQLiteStore/Configuration/checkpointPages`` it asks this object's own
///   connection for a passive checkpoint, which copies what the log holds then while the commits go on;
/// - at the mark itself it runs a passive checkpoint inline, as SQLite's own would: that one copies only
///   what was written since the last copy beside it, and, being the writer's, it reaches the log's end,
///   so the next commit starts the log again from its beginning and the file stays the mark's size.
///   When a copy beside it is still running, the inline one does not wait: the next commit tries again.
final class LogCheckpointer: Sendable {
    private struct State {
        /// The log size at which the next copy beside the commits is asked for.
        var nextMark: Int
        /// The log size the writer last reported; a smaller one means the log started again.
        var lastPages = 0
        /// Whether a copy beside the commits is scheduled or running.
        var isRunning = false
        var isClosed = false
    }

    private let connection: DatabaseQueue
    /// The log size at which the writer copies inline.
    private let pages: Int
    /// How many pages the log grows by between the copies beside the commits.
    private let step: Int
    private let state: Mutex<State>
    /// How many copies beside the commits ran to their end, for tests.
    let checkpointsRun = Atomic<Int>(0)
    /// Whether copies beside the commits are asked for; tests turn them off to see the writer's own.
    let copiesBeside = Atomic<Bool>(true)

    /// Opens the connection that copies the log of the database at `path` beside the commits, an eighth
    /// of `pages` at a time.
    init(path: String, configuration: GRDB.Configuration, pages: Int) throws {
        var configuration = configuration
        configuration.label = (configuration.label ?? "SQLiteStore") + ".checkpoints"
        connection = try DatabaseQueue(path: path, configuration: configuration)
        self.pages = max(1, pages)
        step = max(1, self.pages / 8)
        state = Mutex(State(nextMark: step))
    }

    /// Installs the checkpoints on the writer's connection `db`, in place of SQLite's automatic one. The
    /// writer must not commit after this object is gone: the store keeps it as long as its connections.
    func takeOverCheckpoints(of db: Database) {
        sqlite3_wal_hook(
            db.sqliteConnection,
            { context, connection, _, pages in
                guard let context else { return SQLITE_OK }
                let checkpointer = Unmanaged<LogCheckpointer>.fromOpaque(context).takeUnretainedValue()
                if checkpointer.logHolds(pages: Int(pages)) {
                    // What SQLite's automatic checkpoint does; busy (a copy beside runs) is not an error.
                    sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
                }
                return SQLITE_OK
            },
            Unmanaged.passUnretained(self).toOpaque())
    }

    /// Returns once the copies asked for so far are done (for tests: they run on this connection's queue).
    func finishCopies() async throws {
        try await connection.writeWithoutTransaction { _ in }
    }

    /// Stops copying beside the commits: a copy that runs finishes; none starts after.
    func close() throws {
        state.withLock { $0.isClosed = true }
        try connection.close()
    }

    /// Called on the writer's connection after each commit, with the log's size in pages: asks for a copy
    /// beside the commits at each step, and returns whether the writer copies inline.
    private func logHolds(pages: Int) -> Bool {
        if pages >= self.pages { return true }
        let starts = state.withLock { state -> Bool in
            if pages < state.lastPages { state.nextMark = step }  // the log started again
            state.lastPages = pages
            guard pages >= state.nextMark, !state.isRunning, !state.isClosed, copiesBeside.load(ordering: .relaxed) else {
                return false
            }
            state.nextMark = pages + step
            state.isRunning = true
            return true
        }
        if starts {
            connection.asyncWriteWithoutTransaction { [self] db in
                // Passive: copies what no reader still needs and returns; a failure (a full disk) leaves the
                // log as it is, and the writer's own copy at the mark tries again.
                if (try? db.checkpoint(.passive)) != nil { checkpointsRun.add(1, ordering: .relaxed) }
                state.withLock { $0.isRunning = false }
            }
        }
        return false
    }
}
