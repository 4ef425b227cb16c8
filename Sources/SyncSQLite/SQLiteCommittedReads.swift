import GRDB
import SyncCore

/// How ``SQLiteStore``'s transactions read committed data: each query runs
/// on one snapshot together with a read of the account's revision.
struct SQLiteCommittedReads: CommittedReads {
    let database: any DatabaseReader

    func records(
        in collection: CollectionID, after id: RecordID?, limit: Int, of account: AccountID
    ) async throws -> ([StoredRecord], revision: Int64) {
        try await read(account) { db in try StoreQueries.records(in: collection, after: id, limit: limit, of: account, db) }
    }

    func records(at keys: [RecordKey], of account: AccountID) async throws -> ([RecordKey: StoredRecord], revision: Int64) {
        try await read(account) { db in try StoreQueries.records(at: keys, of: account, db) }
    }

    func metadata(_ key: String, for peer: PeerID, of account: AccountID) async throws -> (SyncValue?, revision: Int64) {
        try await read(account) { db in try StoreQueries.metadata(key, for: peer, of: account, db) }
    }

    /// SQLite `TEXT` holds any string.
    func requireStorable(_ text: String, _ what: String) throws {}

    func storeError(for error: any Error, while operation: String) -> any Error {
        StoreError.wrapping(error, while: operation)
    }

    /// Runs `query` and reads the account's revision on the same snapshot, on the calling thread.
    private func read<T: Sendable>(
        _ account: AccountID, _ query: @escaping @Sendable (Database) throws -> T
    ) async throws -> (T, revision: Int64) {
        try readOnCallingThread(database) { db in (try query(db), try StoreQueries.revision(of: account, db)) }
    }
}

/// Runs `body` on one snapshot of `database`, on the calling thread.
///
/// A store read is short: it looks up rows through an index and decodes them. Handing it to a
/// reader's dispatch queue and back (GRDB's `async` read) costs two thread switches, which were
/// most of a small sync request's time on the server. Readers never wait for the writer in
/// write-ahead-log mode, so the calling thread waits only for SQLite itself. This function is not
/// `async`, so that GRDB's synchronous read is the one called.
func readOnCallingThread<T>(_ database: any DatabaseReader, _ body: (Database) throws -> T) throws -> T {
    try database.read(body)
}
