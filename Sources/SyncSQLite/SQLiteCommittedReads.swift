import GRDB
import SyncCore

/// How ``SQLiteStore``'s transactions read committed data: each query runs
/// after a read of the account's revision, so a commit in between is noticed.
struct SQLiteCommittedReads: CommittedReads {
    let database: any DatabaseReader

    func records(
        in collection: CollectionID, after id: RecordID?, limit: Int, of account: AccountID
    ) async throws -> ([EncodedStoredRecord], revision: Int64) {
        try await read(account) { db in try StoreQueries.records(in: collection, after: id, limit: limit, of: account, db) }
    }

    func records(at keys: [RecordKey], of account: AccountID) async throws -> ([RecordKey: EncodedStoredRecord], revision: Int64) {
        // Keys of several collections take a query each, which must agree.
        guard let first = keys.first, keys.contains(where: { $0.collection != first.collection }) else {
            return try await read(account) { db in try StoreQueries.records(at: keys, of: account, db) }
        }
        return try readAgreeing(account) { db in try StoreQueries.records(at: keys, of: account, db) }
    }

    func records(
        at keys: [RecordKey], metadata key: String, for peer: PeerID, of account: AccountID
    ) async throws -> (([RecordKey: StoredRecord], SyncValue?, latest: ChangePosition), revision: Int64) {
        // A push's few keys of one collection: one statement. Others: a query per collection, which must agree.
        let together = try readOnCallingThread(database) { db in
            try StoreQueries.recordsWithMetadata(at: keys, metadata: key, for: peer, of: account, db)
        }
        if let found = together {
            return ((try found.records.mapValues { try $0.decoded() }, found.metadata, found.latest), found.revision)
        }
        return try readAgreeing(account) { db in
            let found = try StoreQueries.records(at: keys, of: account, db).mapValues { try $0.decoded() }
            return (
                found, try StoreQueries.metadata(key, for: peer, of: account, db),
                try StoreQueries.latestPosition(of: account, db)
            )
        }
    }

    func latestPosition(of account: AccountID) async throws -> (ChangePosition, revision: Int64) {
        try await read(account) { db in try StoreQueries.latestPosition(of: account, db) }
    }

    func metadata(_ key: String, for peer: PeerID, of account: AccountID) async throws -> (SyncValue?, revision: Int64) {
        try await read(account) { db in try StoreQueries.metadata(key, for: peer, of: account, db) }
    }

    func metadata(at keys: [String], for peer: PeerID, of account: AccountID) async throws -> ([String: SyncValue], revision: Int64) {
        try await read(account) { db in try StoreQueries.metadata(at: keys, for: peer, of: account, db) }
    }

    /// SQLite `TEXT` holds any string.
    func requireStorable(_ text: String, _ what: String) throws {}

    func storeError(for error: any Error, while operation: String) -> any Error {
        SQLiteErrors.wrapping(error, while: operation)
    }

    /// Reads the account's revision, then runs `query`, on the calling thread.
    ///
    /// The two are separate statements, each on its own snapshot, and no transaction encloses them
    /// (beginning and ending one cost as much as a small read). The order makes that safe: `query`
    /// sees the revision read or a later commit, never an earlier one, and a commit made after the
    /// revision was read moves it, so ``SQLiteStore`` then refuses to commit the transaction on what
    /// it read and runs the body again.
    private func read<T: Sendable>(
        _ account: AccountID, _ query: @escaping @Sendable (Database) throws -> T
    ) async throws -> (T, revision: Int64) {
        try readOnCallingThread(database) { db in
            let revision = try StoreQueries.revision(of: account, db)
            return (try query(db), revision)
        }
    }

    /// Runs `query`, whose statements must read the same state of the account, between two reads of the
    /// account's revision, on the calling thread.
    ///
    /// Every commit to the account counts its revision up in the same SQLite transaction, so when both
    /// reads give the same revision, no commit to the account came between the statements. A read
    /// transaction would hold them on one snapshot too, but beginning and ending one cost more than two
    /// reads of the revision. When another process keeps committing to the account, the third try runs
    /// in a read transaction.
    private func readAgreeing<T>(_ account: AccountID, _ query: (Database) throws -> T) throws -> (T, revision: Int64) {
        for _ in 0..<2 {
            let agreed: (T, revision: Int64)? = try readOnCallingThread(database) { db in
                let revision = try StoreQueries.revision(of: account, db)
                let result = try query(db)
                return try StoreQueries.revision(of: account, db) == revision ? (result, revision) : nil
            }
            if let agreed { return agreed }
        }
        return try readSnapshotOnCallingThread(database) { db in (try query(db), try StoreQueries.revision(of: account, db)) }
    }
}

/// Runs `body`'s statements on `database`, on the calling thread, outside any transaction: each
/// statement reads its own snapshot (SQLite runs every statement atomically), so a body that needs
/// two statements to agree orders them as ``SQLiteCommittedReads`` does.
///
/// A store read is short: it looks up rows through an index and decodes them. Handing it to a
/// reader's dispatch queue and back (GRDB's `async` read) costs two thread switches, and a
/// transaction around it two more statements; both were a large part of a small sync request's time
/// on the server. Readers never wait for the writer in write-ahead-log mode, so the calling thread
/// waits only for SQLite itself. This function is not `async`, so that GRDB's synchronous read is
/// the one called.
func readOnCallingThread<T>(_ database: any DatabaseReader, _ body: (Database) throws -> T) throws -> T {
    try database.unsafeRead(body)
}

/// Runs `body` in one read transaction of `database`, so that all its statements read one snapshot, on
/// the calling thread (see ``readOnCallingThread(_:_:)``).
func readSnapshotOnCallingThread<T>(_ database: any DatabaseReader, _ body: (Database) throws -> T) throws -> T {
    try database.read(body)
}
