public import SyncCore
import Synchronization

/// A ``SyncStore`` that passes every call to a real store and counts the rows it returns, so a test can
/// check that a sync reads what changed and not the whole data set.
///
/// ```swift
/// let store = RowCountingStore(try SQLiteStore(path: path))
/// // … fill it, sync, then edit ten records …
/// store.reset()
/// _ = try await device.sync()
/// #expect(store.counts.rows <= 10)
/// ```
///
/// A row is a stored record a read hands back: from `record(_:)`, `records(in:after:limit:)`,
/// `records(at:)` (and so `prefetch(_:)`) inside a transaction, or `changes(for:after:in:limit:)`.
/// Rows of the collections in `ignoring` (a stack's bookkeeping, such as the device's journal) are
/// counted apart, in ``Counts/bookkeepingRows``. Metadata values read are counted by their size, in
/// ``Counts/metadataElements``, so that bookkeeping kept in metadata is held to the same bound.
public final class RowCountingStore: SyncStore, Sendable {
    /// What the wrapped store was asked and what it returned.
    public struct Counts: Sendable, Hashable {
        /// Records returned, outside the ignored collections.
        public var rows = 0
        /// The distinct record keys among ``rows``.
        public var keys: Set<RecordKey> = []
        /// Records returned from the ignored collections.
        public var bookkeepingRows = 0
        /// Records written (`put`) outside the ignored collections.
        public var writes = 0
        /// Transactions run.
        public var transactions = 0
        /// The elements of the metadata values returned: 1 for each scalar value, and for an array or a
        /// dictionary 1 and its elements', so that one value holding an entry per record (an id map of
        /// the whole data set) counts as many as it holds.
        public var metadataElements = 0

        /// Makes counts, all zero unless given.
        public init(
            rows: Int = 0, keys: Set<RecordKey> = [], bookkeepingRows: Int = 0, writes: Int = 0, transactions: Int = 0,
            metadataElements: Int = 0
        ) {
            self.rows = rows
            self.keys = keys
            self.bookkeepingRows = bookkeepingRows
            self.writes = writes
            self.transactions = transactions
            self.metadataElements = metadataElements
        }

    }

    /// The store every call goes to.
    public let base: any SyncStore
    /// Collections whose rows count as bookkeeping, not as rows.
    public let ignoring: @Sendable (CollectionID) -> Bool
    private let state = Mutex(Counts())

    /// Wraps `base`.
    /// - Parameters:
    ///   - base: A real store.
    ///   - ignoring: Whether a collection's rows are bookkeeping (counted in ``Counts/bookkeepingRows``).
    ///     By default the collections whose name starts with `_` or `anchorage.`, where the stacks keep
    ///     their journals and indexes.
    public init(
        _ base: any SyncStore,
        ignoring: @escaping @Sendable (CollectionID) -> Bool = { $0.rawValue.hasPrefix("_") || $0.rawValue.hasPrefix("anchorage.") }
    ) {
        self.base = base
        self.ignoring = ignoring
    }

    /// Every count since the store was made or last ``reset()``.
    public var counts: Counts { state.withLock { $0 } }

    /// Sets every count back to zero, and returns the counts it had.
    @discardableResult
    public func reset() -> Counts {
        state.withLock { counts in
            defer { counts = Counts() }
            return counts
        }
    }

    /// Runs `body` with the counts of `stores` at zero and returns its result, the requests it sent through
    /// `requests`, and each store's counts, in the order given.
    /// - Throws: What `body` throws.
    public static func cost<Result>(
        of body: () async throws -> Result, requests: CountingMiddleware, stores: RowCountingStore...
    ) async throws -> (result: Result, requests: Int, counts: [Counts]) {
        let before = requests.total.requests
        for store in stores { store.reset() }
        let result = try await body()
        return (result, requests.total.requests - before, stores.map(\.counts))
    }

    fileprivate func returned(_ records: some Sequence<StoredRecord>) {
        state.withLock { counts in
            for stored in records {
                if ignoring(stored.record.collection) {
                    counts.bookkeepingRows += 1
                } else {
                    counts.rows += 1
                    counts.keys.insert(stored.record.key)
                }
            }
        }
    }

    fileprivate func returned(metadata values: some Sequence<SyncValue>) {
        let elements = values.reduce(0) { $0 + Self.elements(of: $1) }
        state.withLock { $0.metadataElements += elements }
    }

    private static func elements(of value: SyncValue) -> Int {
        switch value {
        case .array(let items): items.reduce(1) { $0 + elements(of: $1) }
        case .dictionary(let entries): entries.values.reduce(1) { $0 + elements(of: $1) }
        default: 1
        }
    }

    fileprivate func wrote(_ record: SyncRecord) {
        guard !ignoring(record.collection) else { return }
        state.withLock { $0.writes += 1 }
    }

    /// Runs the transaction on ``base``, counting what its reads return.
    /// - Throws: What ``base`` or `body` throws.
    public func transaction<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        state.withLock { $0.transactions += 1 }
        return try await base.transaction(for: account) { tx in try await body(CountingTransaction(base: tx, store: self)) }
    }

    /// Runs `body` as ``transaction(for:_:)`` does; ``base`` tells the commit's positions.
    /// - Throws: What `body` or ``base`` throws.
    public func transactionWithPositions<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> (result: Result, positions: CommittedPositions?) {
        state.withLock { $0.transactions += 1 }
        return try await base.transactionWithPositions(for: account) { tx in try await body(CountingTransaction(base: tx, store: self)) }
    }

    /// Runs `body` on ``base``'s committed data, counting what its reads return (and it as a transaction).
    /// - Throws: What `body` or ``base`` throws.
    public func readCommitted<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        state.withLock { $0.transactions += 1 }
        return try await base.readCommitted(for: account) { tx in try await body(CountingTransaction(base: tx, store: self)) }
    }

    /// Reads changes from ``base`` and counts them.
    /// - Throws: What ``base`` throws.
    public func changes(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> ChangeBatch {
        let batch = try await base.changes(for: account, after: position, in: collections, limit: limit)
        returned(batch.records)
        return batch
    }

    /// Forwards to ``base``.
    /// - Throws: What ``base`` throws.
    public func latestPosition(for account: AccountID) async throws -> ChangePosition {
        try await base.latestPosition(for: account)
    }
}

/// A transaction of a ``RowCountingStore``: every call goes to the real one.
private struct CountingTransaction: StoreTransaction {
    let base: any StoreTransaction
    let store: RowCountingStore

    var account: AccountID { base.account }

    func record(_ key: RecordKey) async throws -> StoredRecord? {
        let stored = try await base.record(key)
        if let stored { store.returned(CollectionOfOne(stored)) }
        return stored
    }

    func records(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [StoredRecord] {
        let records = try await base.records(in: collection, after: id, limit: limit)
        store.returned(records)
        return records
    }

    func records(at keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] {
        let found = try await base.records(at: keys)
        store.returned(found.values)
        return found
    }

    func assumeNeverWritten(_ keys: [RecordKey]) async throws { try await base.assumeNeverWritten(keys) }

    func put(_ record: SyncRecord) async throws {
        store.wrote(record)
        try await base.put(record)
    }

    func put(_ encoded: EncodedRecord) async throws {
        store.wrote(try encoded.decoded())
        try await base.put(encoded)
    }

    func purge(_ key: RecordKey) async throws { try await base.purge(key) }

    func records(
        at keys: [RecordKey], withMetadata key: String, for peer: PeerID
    ) async throws -> (records: [RecordKey: StoredRecord], metadata: SyncValue?) {
        let found = try await base.records(at: keys, withMetadata: key, for: peer)
        store.returned(found.records.values)
        store.returned(metadata: found.metadata.map { [$0] } ?? [])
        return found
    }

    func metadata(_ key: String, for peer: PeerID) async throws -> SyncValue? {
        let value = try await base.metadata(key, for: peer)
        store.returned(metadata: value.map { [$0] } ?? [])
        return value
    }

    func metadata(at keys: [String], for peer: PeerID) async throws -> [String: SyncValue] {
        let values = try await base.metadata(at: keys, for: peer)
        store.returned(metadata: values.values)
        return values
    }

    func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) async throws {
        try await base.setMetadata(value, key, for: peer)
    }

    func removeMetadata(keysStartingWith prefix: String, for peer: PeerID) async throws {
        try await base.removeMetadata(keysStartingWith: prefix, for: peer)
    }

    func latestPosition() async throws -> ChangePosition? { try await base.latestPosition() }
}
