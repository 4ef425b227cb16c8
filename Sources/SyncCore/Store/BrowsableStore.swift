#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A store an operator can look through: the accounts it holds and each account's collections, counted.
///
/// The answers are read from committed data and take no account's transaction lock, so an operator
/// console can browse a store while it serves syncs. Each call answers from one read where the store
/// can make one (one SQL statement in `SQLiteStore` and `PostgresStore`).
///
/// ```swift
/// for account in try await store.accountSummaries() {
///     for collection in try await store.collectionSummaries(of: account.account) {
///         print(account.account, collection.collection, collection.liveRecords, collection.deletedRecords)
///     }
/// }
/// let page = try await store.recordPage(of: "ada", in: "notes", after: nil, limit: 100)
/// ```
public protocol BrowsableStore: SyncStore {
    /// Every account that ever committed a write, sorted by name (compared as UTF-8 bytes).
    /// - Throws: ``StoreError`` when the store cannot be read.
    func accountSummaries() async throws -> [AccountSummary]

    /// The collections of `account` that hold at least one record (tombstones count), sorted by name
    /// (compared as UTF-8 bytes); empty for an account that holds no record.
    /// - Throws: ``StoreError`` when the store cannot be read.
    func collectionSummaries(of account: AccountID) async throws -> [CollectionSummary]
}

/// An account of a ``BrowsableStore``, as an operator console lists it.
public struct AccountSummary: Sendable, Hashable {
    /// The account.
    public var account: AccountID
    /// The position of the account's latest committed record write (``ChangePosition/start`` when it
    /// wrote only metadata): what ``SyncStore/latestPosition(for:)`` answers.
    public var lastPosition: ChangePosition

    /// Makes a summary of `account`.
    public init(account: AccountID, lastPosition: ChangePosition) {
        self.account = account
        self.lastPosition = lastPosition
    }
}

/// A collection of one account of a ``BrowsableStore``, counted.
public struct CollectionSummary: Sendable, Hashable {
    /// The collection.
    public var collection: CollectionID
    /// How many of its records are not deleted.
    public var liveRecords: Int
    /// How many of its records are tombstones.
    public var deletedRecords: Int
    /// The position of the collection's latest write: the largest position of its records.
    public var latestPosition: ChangePosition
    /// The largest ``RecordVersion/modifiedAt`` of its records, tombstones included.
    public var latestModified: Date

    /// Makes a summary of `collection`.
    public init(
        collection: CollectionID, liveRecords: Int, deletedRecords: Int, latestPosition: ChangePosition,
        latestModified: Date
    ) {
        self.collection = collection
        self.liveRecords = liveRecords
        self.deletedRecords = deletedRecords
        self.latestPosition = latestPosition
        self.latestModified = latestModified
    }
}

extension SyncStore {
    /// Up to `limit` records of `collection` of `account` in id order after `after` (exclusive; `nil` = from
    /// the first), tombstones included: one page of a collection for an operator console.
    ///
    /// Reads committed data through ``readCommitted(for:_:)``, so it does not wait for the account's
    /// transactions where the store can skip them (`SQLiteStore`, `PostgresStore`). Ask again after the
    /// last id of a page for the next one; a page shorter than `limit` is the last.
    /// - Throws: ``StoreError/Code/invalidArgument`` when `limit` is below 1, or ``StoreError`` when the
    ///   store cannot be read.
    public func recordPage(
        of account: AccountID, in collection: CollectionID, after: RecordID?, limit: Int
    ) async throws -> [StoredRecord] {
        guard limit >= 1 else {
            throw StoreError(.invalidArgument, "recordPage: limit must be at least 1, got \(limit)")
        }
        return try await readCommitted(for: account) { transaction in
            try await transaction.records(in: collection, after: after, limit: limit)
        }
    }

    /// The committed record of `account` at `key`, tombstone included, or `nil` when it was never written
    /// (or was purged).
    ///
    /// Reads committed data through ``readCommitted(for:_:)``, as ``recordPage(of:in:after:limit:)`` does.
    /// - Throws: ``StoreError`` when the store cannot be read.
    public func storedRecord(of account: AccountID, _ key: RecordKey) async throws -> StoredRecord? {
        try await readCommitted(for: account) { transaction in try await transaction.record(key) }
    }
}
