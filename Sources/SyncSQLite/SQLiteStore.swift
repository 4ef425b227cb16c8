import GRDB
public import SyncCore

/// The embedded default ``SyncCore/SyncStore``: records, their change sequence
/// and per-peer metadata in one SQLite database file, through GRDB.
///
/// ```swift
/// let store = try SQLiteStore(path: "sync.sqlite")
/// try await store.transaction(for: "ada") { tx in
///     try await tx.put(SyncRecord(collection: "notes", id: "n1", fields: ["text": "hello"], version: version))
/// }
/// let batch = try await store.changes(for: "ada", after: .start, in: nil, limit: 500)
/// ```
///
/// A file database is a GRDB `DatabasePool` in write-ahead-log mode: reads
/// run side by side with each other and with the one writer. Tests can use
/// ``inMemory(configuration:)``.
///
/// ## Transactions
/// A transaction body is `async`, and a SQLite write transaction cannot stay
/// open across suspension points without blocking the database's only
/// writer. So a transaction runs in three steps:
/// 1. It waits for its account's first-in, first-out lock: transactions of one
///    account in this process run one after another, those of different
///    accounts side by side.
/// 2. The body runs. Its reads go to the committed data (each read a
///    consistent snapshot) overlaid with the body's own pending writes; its
///    writes are only buffered. A body that throws leaves nothing behind.
/// 3. When the body returns, every buffered write is applied at once, in
///    one `BEGIN IMMEDIATE` SQLite transaction that the commits of
///    other accounts arriving meanwhile share (``GroupCommit``: one `COMMIT`
///    and one flush to the disk for all of them): each record written takes
///    the account's next position, in the order of its last write, and the
///    account's revision counts up. A record keeps one row, so a rewritten
///    record appears once in the change sequence, at its latest position.
///
/// The lock alone makes read-modify-write safe within one process. For
/// several processes on one file, every read notes the account's revision,
/// and the commit checks in its write transaction that the revision has not
/// moved; if another process committed to the account in between, the
/// buffered writes are dropped and the body runs again (at most
/// ``Configuration/maximumAttempts`` times, then
/// ``SyncCore/StoreError/Code/conflict``). A body must therefore have no side
/// effects outside the transaction, as ``SyncCore/SyncStore`` requires.
///
/// Inside a transaction, a record it wrote carries the position of its last
/// committed version (``SyncCore/ChangePosition/start`` for a new one) until
/// the transaction commits. Starting a transaction on the same account from
/// inside a body waits forever, as it would on any database.
///
/// ## Positions
/// Positions are per account: 1, 2, 3, … in commit order, with no gaps
/// except those left by rewritten and purged records. Commits are serialised
/// by SQLite, so a reader that has seen every change up to P never misses a
/// later commit. ``changes(for:after:in:limit:)`` and
/// ``latestPosition(for:)`` read committed data only.
///
/// ## Durability
/// Committed means on disk as far as ``Configuration/durability`` says:
/// ``Durability/full`` (the default) survives power loss,
/// ``Durability/normal`` survives the process being killed at any point but
/// may lose the last commits on power loss.
///
/// ## Values
/// Record fields and metadata values are kept in a compact binary form that
/// keeps every bit of reals and dates. Record ids and collection names are
/// compared by their UTF-8 bytes, which is Swift's order for strings in
/// Unicode normalization form C; ids that differ only in normalization are
/// different records here.
public final class SQLiteStore: ChangeNotifyingStore, PositionTellingStore, StoredFormStore {
    /// The database file, or `nil` for an in-memory store.
    public let path: String?
    /// The configuration the store was opened with.
    public let configuration: Configuration
    /// The GRDB connection(s): a `DatabasePool` for a file, a `DatabaseQueue` in memory.
    let database: any DatabaseWriter
    private let locks = AccountLocks()
    /// Writes the commits of concurrent transactions together (see ``GroupCommit``).
    let commits: GroupCommit
    /// Announces each commit of this store object that writes records.
    private let announcer = StoreChangeBroadcaster()

    /// Opens (creating if needed) the store in the database file at `path`.
    ///
    /// The file is put in write-ahead-log mode and brought to this version's
    /// schema; the directory must exist.
    /// - Throws: ``SyncCore/StoreError`` — ``SyncCore/StoreError/Code/unavailable``
    ///   when the file cannot be opened or written, ``SyncCore/StoreError/Code/corrupt``
    ///   when it is not a database or was written by a newer version.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        let (pool, checkpointer) = try withStoreErrors("opening \(path)") {
            let databaseConfiguration = Self.databaseConfiguration(configuration)
            let pool = try DatabasePool(path: path, configuration: databaseConfiguration)
            return (
                pool,
                try LogCheckpointer(path: path, configuration: databaseConfiguration, pages: configuration.checkpointPages)
            )
        }
        try self.init(database: pool, checkpointer: checkpointer, path: path, configuration: configuration)
    }

    /// Makes a store that lives in memory until it is released: for tests and previews.
    /// - Throws: ``SyncCore/StoreError`` when SQLite cannot make the database.
    public static func inMemory(configuration: Configuration = Configuration()) throws -> SQLiteStore {
        let queue = try withStoreErrors("opening an in-memory database") {
            try DatabaseQueue(configuration: databaseConfiguration(configuration))
        }
        return try SQLiteStore(database: queue, checkpointer: nil, path: nil, configuration: configuration)
    }

    private init(database: any DatabaseWriter, checkpointer: LogCheckpointer?, path: String?, configuration: Configuration) throws {
        self.database = database
        self.commits = GroupCommit(database: database, checkpointer: checkpointer)
        self.path = path
        self.configuration = configuration
        try withStoreErrors("preparing the schema of \(path ?? "an in-memory database")") {
            let migrator = StoreSchema.migrator
            if try database.read({ db in try migrator.hasBeenSuperseded(db) }) {
                throw StoreError(
                    .corrupt, "the database was written by a newer version of Anchorage; it cannot be opened here")
            }
            try migrator.migrate(database)
            // GRDB sets the writer of a pool to NORMAL after `prepareDatabase` runs,
            // so the configured level is set again on the connection that commits.
            // That connection also keeps up to 32 MiB of pages (SQLite's default is
            // 2 MiB): a commit updates the indexes at random keys, and with the small
            // cache each one read its pages from the file again. Its commits hand the copies
            // of the write-ahead log into the file to the checkpointer (see `LogCheckpointer`).
            let synchronous = configuration.durability.pragmaValue
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
                try db.execute(sql: "PRAGMA cache_size = -\(Self.writerCacheKiB)")
                checkpointer?.takeOverCheckpoints(of: db)
            }
        }
    }

    /// The page cache of the connection that commits, in KiB.
    static let writerCacheKiB = 32_768

    /// The GRDB configuration for a store configuration.
    private static func databaseConfiguration(_ configuration: Configuration) -> GRDB.Configuration {
        var database = GRDB.Configuration()
        database.label = "Anchorage.SQLiteStore"
        let timeout = configuration.busyTimeout.components
        database.busyMode = .timeout(Double(timeout.seconds) + Double(timeout.attoseconds) * 1e-18)
        database.maximumReaderCount = max(1, configuration.maximumReaderCount)
        let synchronous = configuration.durability.pragmaValue
        let maximumPages = configuration.maximumSize.map { max(1, $0 / 4_096) }
        database.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            if let maximumPages { try db.execute(sql: "PRAGMA max_page_count = \(maximumPages)") }
        }
        return database
    }

    // MARK: SyncStore

    /// Runs `body` with exclusive access to `account`'s data (in this process), commits its
    /// writes in one SQLite transaction when it returns, and tells the positions the commit handed out:
    /// the account's last position before the commit, and after it.
    ///
    /// The transaction handed to `body` must not be used after `body`
    /// returns; a call then throws ``SyncCore/StoreError/Code/invalidArgument``.
    /// `body` may run more than once when another process writes to the same
    /// account at the same time.
    /// - Throws: what `body` throws (nothing is written), or ``SyncCore/StoreError``
    ///   when the commit fails (nothing is written either).
    public func transactionWithPositions<Result: Sendable>(
        for account: AccountID,
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> (result: Result, positions: CommittedPositions?) {
        try await locks.retryingConflicts(for: account, attempts: configuration.maximumAttempts) { _ in
            let reads = SQLiteCommittedReads(database: database)
            let (result, outcome) = try await BufferedTransaction.run(account: account, reads: reads, body)
            guard outcome.readsAgree else { return nil }
            if outcome.writes.isEmpty { return (result, nil) }
            do {
                let positions = try await commit(outcome, of: account)
                if let change = StoreChange.committing(outcome.writes.puts, of: account) {
                    announcer.announce(change)
                }
                return (result, positions)
            } catch is RevisionConflict {
                return nil
            }
        }
    }

    /// Runs `body` on `account`'s committed data without the account's lock: each read sees the latest
    /// commit (see ``SyncCore/SyncStore/readCommitted(for:_:)``).
    /// - Throws: What `body` throws, ``SyncCore/StoreError/Code/invalidArgument`` when it writes, or
    ///   ``SyncCore/StoreError`` when the database cannot be read.
    public func readCommitted<Result: Sendable>(
        for account: AccountID,
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        try await BufferedTransaction.readCommitted(account: account, reads: SQLiteCommittedReads(database: database), body)
    }

    /// The records of `account` written after `position`, tombstones included, in order of position, with
    /// their fields as the database holds them (``SyncCore/StoredFormStore`` decodes them for
    /// ``SyncCore/SyncStore/changes(for:after:in:limit:)``).
    /// - Throws: ``SyncCore/StoreError/Code/invalidArgument`` when `limit` is
    ///   below 1, or ``SyncCore/StoreError`` when the database cannot be read.
    public func encodedChanges(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> EncodedChangeBatch {
        try ChangeBatch.requireValidLimit(limit)
        return try withStoreErrors("reading the changes of \(account)") {
            try readOnCallingThread(database) { db in
                try StoreQueries.encodedChanges(of: account, after: position, in: collections, limit: limit, db)
            }
        }
    }

    /// The position of `account`'s latest committed record write, ``SyncCore/ChangePosition/start`` before any.
    /// - Throws: ``SyncCore/StoreError`` when the database cannot be read.
    public func latestPosition(for account: AccountID) async throws -> ChangePosition {
        try withStoreErrors("reading the latest position of \(account)") {
            try readOnCallingThread(database) { db in try StoreQueries.latestPosition(of: account, db) }
        }
    }

    /// The commits made through this store object that write records, from
    /// now on (``SyncCore/StoreChange``). Commits of other processes writing to
    /// the same file are not announced.
    public func changeNotifications() async throws -> AsyncStream<StoreChange> {
        announcer.changes()
    }

    // MARK: Maintenance

    /// The problems SQLite's `PRAGMA integrity_check` and `PRAGMA foreign_key_check`
    /// find in the database; empty when it is sound.
    /// - Throws: ``SyncCore/StoreError`` when the database cannot be read.
    public func integrityProblems() async throws -> [String] {
        try await withStoreErrors("checking the integrity of \(path ?? "an in-memory database")") {
            try await database.read { db in try StoreQueries.integrityProblems(db) }
        }
    }

    /// Closes the database; every later call throws ``SyncCore/StoreError/Code/unavailable``.
    ///
    /// Releasing the last reference to the store closes it too; call this
    /// to close at a known point, for example before opening the file again.
    /// - Throws: ``SyncCore/StoreError`` when a statement still runs; the store then stays open.
    public func close() throws {
        try withStoreErrors("closing \(path ?? "an in-memory database")") {
            // The checkpointer first: the last connection to close copies what is left of the log.
            try commits.checkpointer?.close()
            try database.close()
        }
    }

    // MARK: Commit

    private func commit(_ outcome: BufferedTransaction.Outcome, of account: AccountID) async throws -> CommittedPositions {
        try await withStoreErrors("committing a transaction of \(account)") {
            try await commits.commit(outcome.writes, of: account, expectedRevision: outcome.oldestRevisionRead)
        }
    }
}
