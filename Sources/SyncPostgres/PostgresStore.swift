import Logging
public import PostgresNIO
public import SyncCore

/// The ``SyncCore/SyncStore`` for servers that outgrow one machine: records,
/// their change sequence and per-peer metadata in PostgreSQL, through
/// postgres-nio, shared by any number of server processes.
///
/// ```swift
/// let client = PostgresClient(configuration: .init(
///     host: "db.internal", username: "anchorage", password: secret, database: "sync", tls: .disable))
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { await client.run() }          // the pool works while this runs
///     let store = try await PostgresStore(client: client)
///     try await store.transaction(for: "ada") { tx in
///         try await tx.put(SyncRecord(collection: "notes", id: "n1", fields: ["text": "hello"], version: version))
///     }
///     let batch = try await store.changes(for: "ada", after: .start, in: nil, limit: 500)
///     group.cancelAll()                               // shuts the pool down
/// }
/// ```
///
/// The store runs its queries on a `PostgresClient`, postgres-nio's
/// connection pool, which works only while its `run()` method runs: run it in
/// a task for as long as the store is used, or let
/// ``withStore(client:configuration:backgroundLogger:_:)`` do it.
///
/// ## Tables
/// The tables live in one PostgreSQL schema (``Configuration/schema``,
/// `anchorage` by default), created with the tables when missing. A table
/// `schema_migration` records the schema's version; the first store to open a
/// database migrates it under an advisory lock, so server processes can start
/// together. A schema written by a newer version of Anchorage is refused with
/// ``SyncCore/StoreError/Code/corrupt``.
///
/// ## Transactions
/// A transaction body is `async` and may take a while; holding a database
/// transaction and a pooled connection open across it would tie both up. So a
/// transaction runs in three steps:
/// 1. It waits for its account's first-in, first-out lock in this store
///    instance: transactions of one account run one after another here,
///    those of different accounts side by side.
/// 2. The body runs. Each of its reads is one SQL statement on committed data
///    (one consistent snapshot), overlaid with the body's own pending writes;
///    its writes are only buffered. A body that throws leaves nothing behind.
/// 3. When the body returns, every buffered write is applied in one SQL
///    transaction that starts by updating the account's row (which locks it
///    until the commit): each record written takes the account's next
///    position, in the order of its last write, and the account's revision
///    counts up. A record keeps one row, so a rewritten record appears once in
///    the change sequence, at its latest position.
///
/// The lock alone makes read-modify-write safe within one store instance.
/// For several processes (or several instances) on one database, every read
/// also returns the account's revision from its snapshot, and the commit
/// checks, holding the account's row lock, that the revision has not moved; if
/// another process committed to the account in between, the buffered writes
/// are rolled back and the body runs again (at most
/// ``Configuration/maximumAttempts`` times, then
/// ``SyncCore/StoreError/Code/conflict``). A body must therefore have no side
/// effects outside the transaction, as ``SyncCore/SyncStore`` requires. The
/// same happens when PostgreSQL itself reports a serialization failure or a
/// deadlock.
///
/// Inside a transaction, a record it wrote carries the position of its last
/// committed version (``SyncCore/ChangePosition/start`` for a new one) until
/// the transaction commits. Starting a transaction on the same account from
/// inside a body waits forever.
///
/// ## Positions
/// Positions are per account: 1, 2, 3, … in commit order, with no gaps
/// except those left by rewritten and purged records. They come from a
/// counter in the account's row (`last_position`), not from a sequence,
/// because a sequence hands out numbers when transactions *start* writing,
/// and transactions *commit* in another order: a reader could see position 8
/// committed while 7 is still open, ask for changes after 8 and never see 7.
///
/// The counter is read and advanced by the commit's first statement, which
/// takes the account row's lock and keeps it until the transaction ends. So
/// for one account, a transaction that takes positions holds the lock from
/// the moment it reads the counter until it commits, and the next one reads
/// the counter only after that commit, when it waits for the lock. Positions
/// are therefore handed out in commit order: when a reader's snapshot shows
/// positions up to P, every transaction of the account that is not in the
/// snapshot either holds the lock now or takes it later, and gets positions
/// above P. ``changes(for:after:in:limit:)`` runs as one statement (one
/// snapshot), so a reader that has seen every change up to P never misses a
/// later commit. Writers of different accounts never wait for each other.
///
/// ## Notifications
/// A transaction that writes records sends `NOTIFY <channel>, '<payload>'`
/// (``Configuration/notificationChannel``, `anchorage_changes` by default),
/// the payload JSON naming the account, the collections written and the
/// writing device, in the same SQL transaction, which PostgreSQL delivers
/// when — and only if — it commits. ``changeNotifications()`` listens on the
/// channel, so a push service in any server process learns what changed.
///
/// ## Values
/// Record fields and metadata values are kept in `BYTEA` columns in a
/// compact binary form that keeps every bit of reals and dates (the form
/// `SQLiteStore` uses). Names are `text` compared by their UTF-8 bytes
/// (`COLLATE "C"`), which is Swift's order for strings in Unicode
/// normalization form C; PostgreSQL `text` cannot hold NUL characters, so
/// names containing one are refused with ``SyncCore/StoreError/Code/invalidArgument``.
///
/// ## Read replica
/// A store opened with a read replica, a PostgreSQL hot standby of its database
/// (``init(client:readReplica:configuration:)``), reads the changes that answer pulls
/// (``encodedChanges(for:after:in:limit:)``, and so ``SyncCore/SyncStore/changes(for:after:in:limit:)``)
/// from the standby; everything else, writes and the reads of transactions, stays on the primary. Before
/// such a read the store asks the primary where its WAL ends and waits, at most
/// ``Configuration/replicaWait``, for the standby to replay that far, so the read sees every commit that
/// ended before it began: a device sees its own writes, and no server process hands out a position another
/// has not reached. A standby that is behind, fails or cannot be reached is left alone for
/// ``Configuration/replicaRetryDelay`` while the primary answers; ``replicaReadCounts`` counts the reads
/// each server answered.
public final class PostgresStore: PositionTellingStore, StoredFormStore {
    /// The connection pool the store runs its queries on.
    public let client: PostgresClient
    /// The configuration the store was opened with.
    public let configuration: Configuration
    let queries: StoreQueries
    /// Where the reads of changes go, when the store has a read replica.
    let replicaReads: ReplicaReadRouter?
    private let locks = AccountLocks()

    /// Opens the store on `client`, creating its schema and tables if they are missing.
    ///
    /// `client.run()` must be running (or start soon): until it does, this waits.
    /// - Throws: ``SyncCore/StoreError`` — ``SyncCore/StoreError/Code/invalidArgument``
    ///   for a schema or channel name that is not a plain identifier,
    ///   ``SyncCore/StoreError/Code/corrupt`` when the schema was written by a newer
    ///   version, ``SyncCore/StoreError/Code/unavailable`` when the database cannot be reached.
    public convenience init(client: PostgresClient, configuration: Configuration = Configuration()) async throws {
        try await self.init(client: client, readReplica: nil, configuration: configuration)
    }

    /// Opens the store on `client`, creating its schema and tables if they are missing, with the reads of
    /// changes going to `readReplica`, a hot standby of `client`'s database (see "Read replica" above).
    ///
    /// `client.run()` and `readReplica.run()` must be running (or start soon): until `client`'s does, this
    /// waits. The standby is not asked anything until the first read of changes.
    /// - Parameters:
    ///   - client: the pool of the primary.
    ///   - readReplica: the pool of a hot standby that streams from the primary; `nil` for none.
    ///   - configuration: where the store keeps its tables and how it uses the standby.
    /// - Throws: What ``init(client:configuration:)`` throws.
    public init(client: PostgresClient, readReplica: PostgresClient?, configuration: Configuration = Configuration()) async throws {
        try configuration.validate()
        self.client = client
        self.configuration = configuration
        let queries = StoreQueries(schema: configuration.schema, logger: configuration.logger)
        self.queries = queries
        replicaReads = readReplica.map {
            ReplicaReadRouter(primary: client, replica: $0, queries: queries, configuration: configuration)
        }
        try await withStoreErrors("preparing schema \(configuration.schema)") {
            try await StoreSchema.migrate(schema: configuration.schema, client: client, logger: configuration.logger)
        }
    }

    // MARK: SyncStore

    /// Runs `body` with exclusive access to `account`'s data (in this store instance), commits its writes
    /// in one SQL transaction when it returns, and tells the positions the commit handed out: the account's
    /// last position before the commit, and after it.
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
        guard !account.rawValue.utf8.contains(0) else {
            throw StoreError(.invalidArgument, "an account name contains a NUL character, which PostgreSQL cannot store")
        }
        return try await locks.retryingConflicts(for: account, attempts: configuration.maximumAttempts) { earlierAttempts in
            let outcome =
                earlierAttempts == 0
                ? try await runOptimistically(body, for: account) : try await runLocked(body, for: account)
            guard case .committed(let result, let positions) = outcome else { return nil }
            return (result, positions)
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
        guard !account.rawValue.utf8.contains(0) else {
            throw StoreError(.invalidArgument, "an account name contains a NUL character, which PostgreSQL cannot store")
        }
        return try await BufferedTransaction.readCommitted(account: account, reads: committedReads, body)
    }

    /// The records of `account` written after `position`, tombstones included, in order of position, with
    /// their fields as the database holds them (``SyncCore/StoredFormStore`` decodes them for
    /// ``SyncCore/SyncStore/changes(for:after:in:limit:)``); read from the read replica when it has caught up.
    /// - Throws: ``SyncCore/StoreError/Code/invalidArgument`` when `limit` is
    ///   below 1, or ``SyncCore/StoreError`` when the database cannot be read.
    public func encodedChanges(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> EncodedChangeBatch {
        try ChangeBatch.requireValidLimit(limit)
        return try await withStoreErrors("reading the changes of \(account)") {
            guard let replicaReads else {
                return try await queries.encodedChanges(of: account, after: position, in: collections, limit: limit, client)
            }
            return try await replicaReads.read { server in
                try await queries.encodedChanges(of: account, after: position, in: collections, limit: limit, server)
            }
        }
    }

    /// The position of `account`'s latest committed record write, ``SyncCore/ChangePosition/start`` before any.
    /// - Throws: ``SyncCore/StoreError`` when the database cannot be read.
    public func latestPosition(for account: AccountID) async throws -> ChangePosition {
        try await withStoreErrors("reading the latest position of \(account)") {
            try await queries.latestPosition(of: account, client)
        }
    }

    // MARK: Running a transaction

    /// How one run of a transaction body ended, unless it threw.
    private enum Attempt<Result> {
        /// The writes committed; the body returned `Result`.
        case committed(Result, CommittedPositions?)
        /// Another process committed to the account since the body read it: run it again.
        case conflicted
    }

    /// Runs `body` holding no database lock, then commits its writes if no
    /// other process committed to the account since its reads.
    private func runOptimistically<Result: Sendable>(
        _ body: @Sendable (any StoreTransaction) async throws -> Result, for account: AccountID
    ) async throws -> Attempt<Result> {
        let (result, outcome) = try await BufferedTransaction.run(account: account, reads: committedReads, body)
        guard outcome.readsAgree else { return .conflicted }
        if outcome.writes.isEmpty { return .committed(result, nil) }
        do {
            let positions = try await withStoreErrors("committing a transaction of \(account)") {
                // One statement, so one transaction of its own.
                try await client.withConnection { connection in try await commit(outcome, of: account, connection) }
            }
            return .committed(result, positions)
        } catch let error where Self.isConflict(error) {
            return .conflicted
        }
    }

    /// Runs `body` while holding the account row's lock in an open SQL
    /// transaction, and commits its writes in that transaction.
    ///
    /// Used after a conflict: no other process can commit to the account
    /// while the body runs, so this run cannot conflict again, and a busy
    /// account cannot starve a transaction.
    private func runLocked<Result: Sendable>(
        _ body: @Sendable (any StoreTransaction) async throws -> Result, for account: AccountID
    ) async throws -> Attempt<Result> {
        let logger = configuration.logger
        do {
            return try await client.withConnection { connection in
                try await Self.inSQLTransaction(connection, logger: logger) {
                    try await withStoreErrors("locking account \(account)") {
                        try await queries.lockAccount(account, connection)
                    }
                    let (result, outcome): (Result, BufferedTransaction.Outcome)
                    do {
                        (result, outcome) = try await BufferedTransaction.run(account: account, reads: committedReads, body)
                    } catch {
                        throw BodyFailure(error: error)
                    }
                    guard outcome.readsAgree else { return .conflicted }
                    guard !outcome.writes.isEmpty else { return .committed(result, nil) }
                    let positions = try await withStoreErrors("committing a transaction of \(account)") {
                        try await commit(outcome, of: account, connection)
                    }
                    return .committed(result, positions)
                }
            }
        } catch let failure as BodyFailure {
            throw failure.error
        } catch let error where Self.isConflict(error) {
            return .conflicted
        } catch {
            throw PostgresErrors.wrapping(error, while: "running a transaction of \(account)")
        }
    }

    /// How a transaction reads the committed data.
    private var committedReads: PostgresCommittedReads { PostgresCommittedReads(client: client, queries: queries) }

    /// Commits what a transaction wrote to `account` on `connection`, if no other process committed to the
    /// account since the oldest revision the transaction read.
    /// - Throws: ``RevisionConflict`` when one did, or what the database throws.
    private func commit(
        _ outcome: BufferedTransaction.Outcome, of account: AccountID, _ connection: PostgresConnection
    ) async throws -> CommittedPositions {
        try await queries.commit(
            outcome.writes, of: account, expectedRevision: outcome.oldestRevisionRead,
            notifying: configuration.notificationChannel, connection)
    }

    /// Runs `work` between `BEGIN` and `COMMIT` on `connection`, rolling back when it throws.
    private static func inSQLTransaction<T>(
        _ connection: PostgresConnection, logger: Logger, _ work: () async throws -> T
    ) async throws -> T {
        try await connection.query("BEGIN", logger: logger)
        let value: T
        do {
            value = try await work()
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
        try await connection.query("COMMIT", logger: logger)
        return value
    }

    /// Whether `error` means a concurrent transaction got in the way, so running again can succeed.
    private static func isConflict(_ error: any Error) -> Bool {
        if error is RevisionConflict { return true }
        if let storeError = error as? StoreError, let underlying = storeError.underlying {
            return PostgresErrors.isSerializationFailure(underlying)
        }
        return PostgresErrors.isSerializationFailure(error)
    }
}

/// What a transaction body threw, carried through the store's own error handling unchanged.
private struct BodyFailure: Error {
    var error: any Error
}
