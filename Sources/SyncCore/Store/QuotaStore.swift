import Synchronization

/// A store that holds every account to a quota of live records and of their bytes.
///
/// ```swift
/// let store = QuotaStore(base: try SQLiteStore(path: "sync.sqlite"), limits: .init(records: 100_000, bytes: 1 << 30))
/// ```
///
/// Each transaction counts what its writes add and remove — a live record
/// counts once, with the bytes of its collection, id and fields in the
/// durable stores' binary form; a tombstone counts nothing, so deleting
/// frees quota — and keeps the account's totals in the
/// store's metadata (peer ``usagePeer``) **in the same transaction**, so they
/// are exact, survive restarts, and are shared by every process on the same
/// database. A transaction that would leave the account above a limit while
/// growing it throws ``StoreError`` with code ``StoreError/Code/quotaExceeded``
/// before it commits: the base store rolls it back, so nothing of it is
/// stored. A transaction that shrinks the account or keeps it the same size
/// always commits, even above a limit that was lowered.
///
/// An account that holds records from before the quota was switched on has
/// its totals counted once, from its change sequence, on its first write
/// through this store.
///
/// Servers answer the error with their protocol's "no space" answer:
/// `SyncService.respond(to:context:)` turns it into HTTP 507, OTA into `E_LimitExceeded`.
public struct QuotaStore: SyncStore {
    /// The most an account may hold; `nil` for no limit.
    public struct Limits: Sendable, Hashable {
        /// The most live records (tombstones do not count).
        public var records: Int?
        /// The most bytes of live records.
        public var bytes: Int?

        /// Makes limits.
        public init(records: Int? = nil, bytes: Int? = nil) {
            self.records = records
            self.bytes = bytes
        }
    }

    /// What an account holds: its live records and their bytes.
    public struct Usage: Sendable, Hashable, Codable {
        /// Live records.
        public var records: Int64
        /// Bytes of the live records.
        public var bytes: Int64

        /// Makes a usage.
        public init(records: Int64 = 0, bytes: Int64 = 0) {
            self.records = records
            self.bytes = bytes
        }
    }

    /// The metadata peer under which each account's ``Usage`` is kept.
    public static let usagePeer: PeerID = "anchorage.quota"
    static let usageKey = MetadataKey<Usage>("usage", peer: usagePeer)

    /// The store records live in.
    public let base: any SyncStore
    /// The limits every account is held to.
    public let limits: Limits
    /// Accounts whose totals are known to be kept in the metadata.
    private let counted = Counted()

    /// Wraps `base`.
    public init(base: any SyncStore, limits: Limits) {
        self.base = base
        self.limits = limits
    }

    /// Runs `body` in a transaction of the base store, and refuses it when it
    /// would take `account` over a limit.
    /// - Throws: what `body` throws, ``StoreError`` from the base store, or
    ///   ``StoreError`` with code ``StoreError/Code/quotaExceeded``; nothing is stored then.
    public func transaction<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        try await transactionWithPositions(for: account, body).result
    }

    /// Runs `body` on the base store's committed data (``SyncStore/readCommitted(for:_:)``): reads count nothing.
    /// - Throws: What `body` or the base store throws.
    public func readCommitted<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        try await base.readCommitted(for: account, body)
    }

    /// Runs `body` as ``transaction(for:_:)`` does; the base store tells the commit's positions.
    public func transactionWithPositions<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> (result: Result, positions: CommittedPositions?) {
        let baseline = try await baselineIfUncounted(account)
        let limits = self.limits
        let result = try await base.transactionWithPositions(for: account) { tx in
            let counting = QuotaTransaction(base: tx)
            let result = try await body(counting)
            let change = counting.change
            guard change != Usage() else { return result }
            let before = try await tx.metadata(Self.usageKey) ?? baseline ?? Usage()
            let after = Usage(records: before.records + change.records, bytes: before.bytes + change.bytes)
            if let maxRecords = limits.records, change.records > 0, after.records > Int64(maxRecords) {
                throw StoreError(
                    .quotaExceeded,
                    "account \(account) may hold at most \(maxRecords) records; this write would make \(after.records)")
            }
            if let maxBytes = limits.bytes, change.bytes > 0, after.bytes > Int64(maxBytes) {
                throw StoreError(
                    .quotaExceeded, "account \(account) may hold at most \(maxBytes) bytes; this write would make \(after.bytes)")
            }
            try await tx.setMetadata(after, Self.usageKey)
            return result
        }
        counted.insert(account)
        return result
    }

    /// What `account` holds now, as kept in the metadata (counted from its records when it is not kept yet).
    /// - Throws: ``StoreError`` when the store cannot be read.
    public func usage(of account: AccountID) async throws -> Usage {
        if let kept = try await base.transaction(for: account, { tx in try await tx.metadata(Self.usageKey) }) {
            return kept
        }
        return try await countedUsage(of: account)
    }

    /// Forwards to the base store.
    public func changes(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> ChangeBatch {
        try await base.changes(for: account, after: position, in: collections, limit: limit)
    }

    /// Forwards to the base store.
    public func encodedChanges(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> EncodedChangeBatch {
        try await base.encodedChanges(for: account, after: position, in: collections, limit: limit)
    }

    /// Forwards to the base store.
    public func latestPosition(for account: AccountID) async throws -> ChangePosition {
        try await base.latestPosition(for: account)
    }

    /// The account's usage counted from its records, when the metadata does not keep it yet; `nil` when it does.
    private func baselineIfUncounted(_ account: AccountID) async throws -> Usage? {
        guard !counted.contains(account) else { return nil }
        let kept = try await base.transaction(for: account) { tx in try await tx.metadata(Self.usageKey) != nil }
        if kept {
            counted.insert(account)
            return nil
        }
        return try await countedUsage(of: account)
    }

    private func countedUsage(of account: AccountID) async throws -> Usage {
        var usage = Usage()
        for try await page in base.changePages(for: account, after: .start) {
            for stored in page.records where !stored.record.isDeleted {
                usage.records += 1
                usage.bytes += try Self.size(of: stored.record)
            }
        }
        return usage
    }

    /// The bytes a live record counts for: its collection, id and fields in the stores' binary form.
    /// - Throws: ``StoreError`` (invalid argument) for fields nested too deep to store.
    public static func size(of record: SyncRecord) throws -> Int64 {
        Int64(
            record.collection.rawValue.utf8.count + record.id.rawValue.utf8.count
                + (try StoredValueFormat.encode(fields: record.fields).count))
    }

    private final class Counted: Sendable {
        private let accounts = Mutex<Set<AccountID>>([])
        func contains(_ account: AccountID) -> Bool { accounts.withLock { $0.contains(account) } }
        func insert(_ account: AccountID) { _ = accounts.withLock { $0.insert(account) } }
    }
}

/// A transaction that counts how its record writes change the account's usage.
private final class QuotaTransaction: StoreTransaction {
    let base: any StoreTransaction
    private let counted = Mutex(QuotaStore.Usage())

    init(base: any StoreTransaction) { self.base = base }

    var account: AccountID { base.account }
    var change: QuotaStore.Usage { counted.withLock { $0 } }

    func record(_ key: RecordKey) async throws -> StoredRecord? { try await base.record(key) }

    func records(at keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] { try await base.records(at: keys) }

    // Reads go to the base transaction as they are, so that the base store's one-read forms (a push's
    // records with the device's last pack; fields left in the stored form) are not turned into the defaults.
    func records(
        at keys: [RecordKey], withMetadata key: String, for peer: PeerID
    ) async throws -> (records: [RecordKey: StoredRecord], metadata: SyncValue?) {
        try await base.records(at: keys, withMetadata: key, for: peer)
    }

    func encodedRecords(at keys: [RecordKey]) async throws -> [RecordKey: EncodedStoredRecord] {
        try await base.encodedRecords(at: keys)
    }

    func encodedRecords(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [EncodedStoredRecord] {
        try await base.encodedRecords(in: collection, after: id, limit: limit)
    }

    func assumeNeverWritten(_ keys: [RecordKey]) async throws { try await base.assumeNeverWritten(keys) }

    func records(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [StoredRecord] {
        try await base.records(in: collection, after: id, limit: limit)
    }

    func put(_ record: SyncRecord) async throws {
        let old = try await Self.usage(of: base.record(record.key)?.record)
        let new = try Self.usage(of: record)
        try await base.put(record)
        add(new, minus: old)
    }

    func put(_ encoded: EncodedRecord) async throws {
        let old = try await Self.usage(of: base.record(encoded.key)?.record)
        let new = try Self.usage(of: encoded.decoded())
        try await base.put(encoded)
        add(new, minus: old)
    }

    func purge(_ key: RecordKey) async throws {
        let old = try await Self.usage(of: base.record(key)?.record)
        try await base.purge(key)
        add(QuotaStore.Usage(), minus: old)
    }

    func metadata(_ key: String, for peer: PeerID) async throws -> SyncValue? {
        try await base.metadata(key, for: peer)
    }

    func metadata(at keys: [String], for peer: PeerID) async throws -> [String: SyncValue] {
        try await base.metadata(at: keys, for: peer)
    }

    func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) async throws {
        try await base.setMetadata(value, key, for: peer)
    }

    func removeMetadata(keysStartingWith prefix: String, for peer: PeerID) async throws {
        try await base.removeMetadata(keysStartingWith: prefix, for: peer)
    }

    func latestPosition() async throws -> ChangePosition? { try await base.latestPosition() }

    private func add(_ new: QuotaStore.Usage, minus old: QuotaStore.Usage) {
        counted.withLock {
            $0.records += new.records - old.records
            $0.bytes += new.bytes - old.bytes
        }
    }

    private static func usage(of record: SyncRecord?) throws -> QuotaStore.Usage {
        guard let record, !record.isDeleted else { return QuotaStore.Usage() }
        return QuotaStore.Usage(records: 1, bytes: try QuotaStore.size(of: record))
    }
}
