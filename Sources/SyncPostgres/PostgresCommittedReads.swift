import PostgresNIO
import SyncCore

/// How ``PostgresStore``'s transactions read committed data: each query also
/// returns the account's revision from the same snapshot.
struct PostgresCommittedReads: CommittedReads {
    let client: PostgresClient
    let queries: StoreQueries

    func records(at keys: [RecordKey], of account: AccountID) async throws -> ([RecordKey: EncodedStoredRecord], revision: Int64) {
        try await queries.records(at: keys, of: account, client)
    }

    func records(
        in collection: CollectionID, after id: RecordID?, limit: Int, of account: AccountID
    ) async throws -> ([EncodedStoredRecord], revision: Int64) {
        try await queries.records(in: collection, after: id, limit: limit, of: account, client)
    }

    func records(
        at keys: [RecordKey], metadata key: String, for peer: PeerID, of account: AccountID
    ) async throws -> (([RecordKey: StoredRecord], SyncValue?, latest: ChangePosition), revision: Int64) {
        try await queries.records(at: keys, metadata: key, for: peer, of: account, client)
    }

    func latestPosition(of account: AccountID) async throws -> (ChangePosition, revision: Int64) {
        try await queries.latestPositionAndRevision(of: account, client)
    }

    func metadata(_ key: String, for peer: PeerID, of account: AccountID) async throws -> (SyncValue?, revision: Int64) {
        try await queries.metadata(key, for: peer, of: account, client)
    }

    func metadata(at keys: [String], for peer: PeerID, of account: AccountID) async throws -> ([String: SyncValue], revision: Int64) {
        try await queries.metadata(at: keys, for: peer, of: account, client)
    }

    /// PostgreSQL `text` columns cannot hold NUL characters.
    func requireStorable(_ text: String, _ what: String) throws {
        guard !text.utf8.contains(0) else {
            throw StoreError(.invalidArgument, "a \(what) contains a NUL character, which PostgreSQL cannot store")
        }
    }

    func storeError(for error: any Error, while operation: String) -> any Error {
        PostgresErrors.wrapping(error, while: operation)
    }
}
