import FoundationEssentials
import GRDB
import SyncCore
import Synchronization

/// A transaction of ``SQLiteStore``: reads committed data overlaid with its
/// own pending writes, and buffers every write until the store commits them
/// in one SQLite transaction.
///
/// Each read also notes the account's revision as that read saw it. The store
/// commits only if the account's revision is still the one every read saw,
/// so a transaction whose reads another process's commit invalidated runs
/// again instead of committing on stale data.
final class SQLiteTransaction: StoreTransaction {
    /// What a finished transaction hands to the store.
    struct Outcome: Sendable {
        /// The writes to commit.
        var writes: PendingWrites
        /// The oldest account revision any read saw; `nil` when it read nothing.
        var oldestRevisionRead: Int64?
        /// Whether every read saw the same revision (no commit of the account happened between reads).
        var readsAgree: Bool
    }

    private struct State: Sendable {
        var isFinished = false
        var sequence = 0
        var records: [RecordKey: (sequence: Int, write: PendingRecordWrite)] = [:]
        var metadata: [PeerID: [String: PendingMetadataWrite]] = [:]
        var oldestRevision: Int64?
        var newestRevision: Int64?
    }

    let account: AccountID
    private let database: any DatabaseReader
    private let state = Mutex(State())

    init(account: AccountID, database: any DatabaseReader) {
        self.account = account
        self.database = database
    }

    /// Ends the transaction and returns what it wrote; later calls on it throw.
    func finish() -> Outcome {
        state.withLock { state in
            state.isFinished = true
            var writes = PendingWrites()
            writes.records = state.records.sorted { $0.value.sequence < $1.value.sequence }
                .map { (key: $0.key, write: $0.value.write) }
            for (peer, values) in state.metadata {
                for (key, write) in values { writes.metadata.append((peer: peer, key: key, write: write)) }
            }
            return Outcome(
                writes: writes, oldestRevisionRead: state.oldestRevision,
                readsAgree: state.oldestRevision == state.newestRevision)
        }
    }

    // MARK: Records

    func record(_ key: RecordKey) async throws -> StoredRecord? {
        let account = self.account
        let committed = try await read("reading record \(key)") { db in
            try StoreQueries.record(key, of: account, db)
        }
        return try withOpenState { state in
            switch state.records[key]?.write {
            case .put(let record, _): StoredRecord(record: record, position: committed?.position ?? .start)
            case .purge: nil
            case nil: committed
            }
        }
    }

    func records(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [StoredRecord] {
        guard limit >= 1 else {
            throw StoreError(.invalidArgument, "records(in:after:limit:): limit must be at least 1, got \(limit)")
        }
        let pending = try withOpenState { state in
            state.records.filter { key, _ in key.collection == collection && id.map { key.id > $0 } ?? true }
                .mapValues(\.write)
        }
        // Each pending write can hide at most one committed record, so this many
        // committed ones always fill the page.
        let fetchLimit = limit > Int.max - pending.count ? Int.max : limit + pending.count
        let account = self.account
        let committed = try await read("reading collection \(collection)") { db in
            try StoreQueries.records(in: collection, after: id, limit: fetchLimit, of: account, db)
        }
        guard !pending.isEmpty else { return committed }
        return Self.merge(committed: committed, pending: pending, limit: limit)
    }

    func put(_ record: SyncRecord) async throws {
        let fields = try StoredValueFormat.encode(fields: record.fields)
        try withOpenState { state in
            state.sequence += 1
            state.records[record.key] = (state.sequence, .put(record, fields: fields))
        }
    }

    func purge(_ key: RecordKey) async throws {
        try withOpenState { state in
            state.sequence += 1
            state.records[key] = (state.sequence, .purge)
        }
    }

    // MARK: Metadata

    func metadata(_ key: String, for peer: PeerID) async throws -> SyncValue? {
        if let pending = try withOpenState({ $0.metadata[peer]?[key] }) { return pending.value }
        let account = self.account
        let committed = try await read("reading metadata \(key) of peer \(peer)") { db in
            try StoreQueries.metadata(key, for: peer, of: account, db)
        }
        // A write may have happened while reading; the latest one wins.
        return try withOpenState { state in
            if let pending = state.metadata[peer]?[key] { return pending.value }
            return committed
        }
    }

    func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) async throws {
        let blob = try value.map { value throws(StoreError) in try StoredValueFormat.encode(value) }
        try withOpenState { state in
            state.metadata[peer, default: [:]][key] = PendingMetadataWrite(value: value, blob: blob)
        }
    }

    // MARK: Helpers

    /// Runs `query` on a snapshot of the committed data and notes the account revision it saw.
    private func read<T: Sendable>(
        _ description: String, _ query: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try withOpenState { _ in }
        let account = self.account
        let (value, revision) = try await withStoreErrors(description) {
            try await database.read { db in
                (try query(db), try StoreQueries.revision(of: account, db))
            }
        }
        try withOpenState { state in
            state.oldestRevision = min(state.oldestRevision ?? revision, revision)
            state.newestRevision = max(state.newestRevision ?? revision, revision)
        }
        return value
    }

    private func withOpenState<T>(_ body: (inout State) throws -> T) throws -> T {
        try state.withLock { state in
            guard !state.isFinished else {
                throw StoreError(.invalidArgument, "the transaction on account \(account) has already ended")
            }
            return try body(&state)
        }
    }

    /// `committed` (records after the page's start, in id order) overlaid
    /// with the `pending` writes to the same range, cut to `limit`.
    private static func merge(
        committed: [StoredRecord], pending: [RecordKey: PendingRecordWrite], limit: Int
    ) -> [StoredRecord] {
        var byID: [RecordID: StoredRecord] = [:]
        for stored in committed { byID[stored.record.id] = stored }
        // Committed ids beyond the last fetched one are unknown, so the merged
        // page may only reach that far when the fetch was cut short.
        let horizon = committed.count >= limit + pending.count ? committed.last?.record.id : nil
        for (key, write) in pending {
            if let horizon, key.id > horizon { continue }
            switch write {
            case .put(let record, _):
                byID[key.id] = StoredRecord(record: record, position: byID[key.id]?.position ?? .start)
            case .purge:
                byID[key.id] = nil
            }
        }
        return byID.values.sorted { $0.record.id < $1.record.id }.prefix(limit).map { $0 }
    }
}
