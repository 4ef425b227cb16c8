import Synchronization

/// A ``SyncStore`` that keeps everything in memory: for tests, previews and
/// servers whose data may be lost on restart.
///
/// It follows every rule of ``SyncStore``:
/// - Transactions of one account run one after another, in the order they
///   asked to start (a first-in, first-out lock per account); transactions of
///   different accounts run side by side.
/// - A body reads its own writes; its writes and metadata changes are applied
///   only when it returns, so a body that throws leaves nothing behind.
/// - One counter gives positions across all accounts: each record written in
///   a committed transaction takes the next one, in the order of its last
///   write in the transaction. A record keeps only its latest version and
///   position. Inside a transaction, a record it wrote carries the position
///   of its last committed version (``ChangePosition/start`` for a new one)
///   until the transaction commits.
/// - A `limit` below 1 is refused with ``StoreError/Code/invalidArgument``.
///
/// ```swift
/// let store = MemoryStore()
/// try await store.transaction(for: "ada") { tx in
///     try await tx.put(SyncRecord(collection: "notes", id: "n1", fields: ["text": "hello"], version: version))
/// }
/// let batch = try await store.changes(for: "ada", after: .start, in: nil, limit: 100)
/// ```
public actor MemoryStore: ChangeNotifyingStore, PositionTellingStore {
    private(set) var accounts: [AccountID: MemoryAccountState] = [:]
    /// Announces each commit that writes records.
    private nonisolated let announcer = StoreChangeBroadcaster()
    private var lastPosition: UInt64 = 0
    /// One transaction at a time per account, first come first served.
    private let locks = AccountLocks()

    /// Makes an empty store.
    public init() {}

    /// Runs `body` with exclusive access to `account`'s data, applies its writes when it returns, and
    /// tells the positions its commit handed out; positions count across accounts here, so
    /// ``CommittedPositions/before`` is the one right before the commit's first record write.
    ///
    /// The transaction handed to `body` must not be used after `body`
    /// returns; a call then throws ``StoreError/Code/invalidArgument``.
    /// Starting a transaction on the same account from inside `body` waits
    /// forever, as it would on a database.
    /// - Throws: what `body` throws (after discarding its writes).
    public func transactionWithPositions<Result: Sendable>(
        for account: AccountID,
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> (result: Result, positions: CommittedPositions?) {
        await locks.acquire(account)
        let transaction = MemoryTransaction(account: account, base: accounts[account] ?? MemoryAccountState())
        let result: Result
        do {
            result = try await body(transaction)
        } catch {
            _ = transaction.finish()
            locks.release(account)
            throw error
        }
        let writes = transaction.finish()
        let before = lastPosition
        commit(writes, to: account)
        locks.release(account)
        if let change = StoreChange.committing(writes.records.compactMap { if case .put = $0.1 { $0.0 } else { nil } }, of: account) { announcer.announce(change) }
        let positions = writes.isEmpty ? nil : CommittedPositions(before: ChangePosition(before), latest: ChangePosition(lastPosition))
        return (result, positions)
    }

    /// The commits that write records from now on (``StoreChange``), with
    /// their collections and ``StoreChange/writer``.
    public nonisolated func changeNotifications() async throws -> AsyncStream<StoreChange> {
        announcer.changes()
    }

    /// The records of `account` written after `position`, tombstones
    /// included, in order of position.
    /// - Throws: ``StoreError/Code/invalidArgument`` when `limit` is below 1.
    public func changes(
        for account: AccountID,
        after position: ChangePosition,
        in collections: Set<CollectionID>?,
        limit: Int
    ) async throws -> ChangeBatch {
        try ChangeBatch.requireValidLimit(limit)
        guard let state = accounts[account] else {
            return ChangeBatch(records: [], lastPosition: position, hasMore: false)
        }
        return state.changes(after: position, in: collections, limit: limit)
    }

    /// The position of `account`'s latest committed record write, ``ChangePosition/start`` before any.
    public func latestPosition(for account: AccountID) async throws -> ChangePosition {
        accounts[account]?.latestPosition ?? .start
    }

    /// Every metadata value `account` holds, by peer and key: what a test compares to show that a request
    /// left the store's bookkeeping as it was, whatever keys a stack keeps it under.
    package func allMetadata(of account: AccountID) -> [PeerID: [String: SyncValue]] {
        accounts[account]?.metadata ?? [:]
    }

    // MARK: Commit

    private func commit(_ writes: MemoryTransaction.Writes, to account: AccountID) {
        guard !writes.isEmpty else { return }
        var state = accounts.removeValue(forKey: account) ?? MemoryAccountState()
        for (key, write) in writes.records {
            switch write {
            case .put(let record):
                lastPosition += 1
                state.put(StoredRecord(record: record, position: ChangePosition(lastPosition)))
            case .purge:
                state.purge(key)
            }
        }
        for (peer, values) in writes.metadata {
            for (key, value) in values {
                state.setMetadata(value, key, for: peer)
            }
        }
        accounts[account] = state
    }
}

// MARK: - Account state

/// One account's records, change log and metadata.
struct MemoryAccountState: Sendable {
    /// Every record, by key.
    var records: [RecordKey: StoredRecord] = [:]
    /// The ids of each collection, sorted, for paging in id order.
    var idsByCollection: [CollectionID: [RecordID]] = [:]
    /// Writes in order of position; an entry is stale when its record was
    /// written again or purged since.
    var log: [LogEntry] = []
    /// How many entries of ``log`` are stale.
    var staleEntries = 0
    /// Metadata values by peer and key.
    var metadata: [PeerID: [String: SyncValue]] = [:]
    /// The position of the latest record write.
    var latestPosition = ChangePosition.start

    struct LogEntry: Sendable {
        var position: ChangePosition
        var key: RecordKey
    }

    mutating func put(_ stored: StoredRecord) {
        let key = stored.record.key
        if records.updateValue(stored, forKey: key) == nil {
            insertID(key)
        } else {
            staleEntries += 1
        }
        log.append(LogEntry(position: stored.position, key: key))
        latestPosition = stored.position
        compactLogIfNeeded()
    }

    mutating func purge(_ key: RecordKey) {
        guard records.removeValue(forKey: key) != nil else { return }
        staleEntries += 1
        removeID(key)
        compactLogIfNeeded()
    }

    mutating func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) {
        if let value {
            metadata[peer, default: [:]][key] = value
        } else {
            metadata[peer]?[key] = nil
            if metadata[peer]?.isEmpty == true { metadata[peer] = nil }
        }
    }

    func changes(after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int) -> ChangeBatch {
        var found: [StoredRecord] = []
        var index = firstLogIndex(after: position)
        while index < log.count {
            let entry = log[index]
            index += 1
            guard let stored = records[entry.key], stored.position == entry.position else { continue }
            if let collections, !collections.contains(entry.key.collection) { continue }
            if found.count == limit {
                return ChangeBatch(records: found, lastPosition: found[found.count - 1].position, hasMore: true)
            }
            found.append(stored)
        }
        return ChangeBatch(records: found, lastPosition: found.last?.position ?? position, hasMore: false)
    }

    /// Up to `limit` records of `collection` with ids after `id`, in id order.
    func records(in collection: CollectionID, after id: RecordID?, limit: Int) -> [StoredRecord] {
        guard let ids = idsByCollection[collection] else { return [] }
        var index = id.map { Self.firstIndex(in: ids, after: $0) } ?? 0
        var result: [StoredRecord] = []
        while index < ids.count, result.count < limit {
            if let stored = records[RecordKey(collection: collection, id: ids[index])] { result.append(stored) }
            index += 1
        }
        return result
    }

    /// The index in a sorted id list of the first id greater than `id`.
    static func firstIndex(in ids: [RecordID], after id: RecordID) -> Int {
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] <= id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func firstLogIndex(after position: ChangePosition) -> Int {
        var low = 0
        var high = log.count
        while low < high {
            let middle = (low + high) / 2
            if log[middle].position <= position { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func insertID(_ key: RecordKey) {
        var ids = idsByCollection.removeValue(forKey: key.collection) ?? []
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < key.id { low = middle + 1 } else { high = middle }
        }
        ids.insert(key.id, at: low)
        idsByCollection[key.collection] = ids
    }

    private mutating func removeID(_ key: RecordKey) {
        guard var ids = idsByCollection.removeValue(forKey: key.collection) else { return }
        let index = Self.firstIndex(in: ids, after: key.id) - 1
        if index >= 0, ids[index] == key.id { ids.remove(at: index) }
        if !ids.isEmpty { idsByCollection[key.collection] = ids }
    }

    private mutating func compactLogIfNeeded() {
        guard staleEntries >= 1_024, staleEntries * 2 >= log.count else { return }
        log.removeAll { entry in records[entry.key]?.position != entry.position }
        staleEntries = 0
    }
}

// MARK: - Transaction

/// A transaction of ``MemoryStore``: reads the account's state as it was when
/// the transaction started (no other transaction of the account runs
/// meanwhile), overlaid with its own writes.
final class MemoryTransaction: StoreTransaction {
    /// One pending record write.
    enum RecordWrite: Sendable {
        case put(SyncRecord)
        case purge
    }

    /// What a finished transaction writes, in the order to apply it.
    struct Writes: Sendable {
        /// Record writes in the order of each record's last write.
        var records: [(RecordKey, RecordWrite)]
        /// Metadata writes by peer and key; `nil` removes.
        var metadata: [PeerID: [String: SyncValue?]]
        var isEmpty: Bool { records.isEmpty && metadata.isEmpty }
    }

    private struct State: Sendable {
        /// The account's committed state; dropped when the transaction
        /// finishes, so the commit that follows mutates the store's only
        /// copy in place instead of copying it.
        var base: MemoryAccountState
        var isFinished = false
        var sequence = 0
        var writes: [RecordKey: (sequence: Int, write: RecordWrite)] = [:]
        var metadata: [PeerID: [String: SyncValue?]] = [:]
    }

    let account: AccountID
    private let state: Mutex<State>

    init(account: AccountID, base: MemoryAccountState) {
        self.account = account
        self.state = Mutex(State(base: base))
    }

    /// Ends the transaction and returns its writes; later calls on it throw.
    func finish() -> Writes {
        state.withLock { state in
            state.isFinished = true
            state.base = MemoryAccountState()
            let ordered = state.writes.sorted { $0.value.sequence < $1.value.sequence }
            return Writes(records: ordered.map { ($0.key, $0.value.write) }, metadata: state.metadata)
        }
    }

    func record(_ key: RecordKey) async throws -> StoredRecord? {
        try withOpenState { state in
            switch state.writes[key]?.write {
            case .put(let record): StoredRecord(record: record, position: state.base.records[key]?.position ?? .start)
            case .purge: nil
            case nil: state.base.records[key]
            }
        }
    }

    func records(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [StoredRecord] {
        guard limit >= 1 else {
            throw StoreError(.invalidArgument, "records(in:after:limit:): limit must be at least 1, got \(limit)")
        }
        return try withOpenState { state in
            let pending = state.writes.filter { key, _ in
                key.collection == collection && id.map { key.id > $0 } ?? true
            }
            guard !pending.isEmpty else { return state.base.records(in: collection, after: id, limit: limit) }
            return Self.merged(state.base, collection: collection, after: id, pending: pending, limit: limit)
        }
    }

    func put(_ record: SyncRecord) async throws {
        try withOpenState { state in
            state.sequence += 1
            state.writes[record.key] = (state.sequence, .put(record))
        }
    }

    func purge(_ key: RecordKey) async throws {
        try withOpenState { state in
            state.sequence += 1
            state.writes[key] = (state.sequence, .purge)
        }
    }

    func metadata(_ key: String, for peer: PeerID) async throws -> SyncValue? {
        try withOpenState { state in
            if let pending = state.metadata[peer]?[key] { return pending }
            return state.base.metadata[peer]?[key]
        }
    }

    func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) async throws {
        try withOpenState { state in
            state.metadata[peer, default: [:]][key] = .some(value)
        }
    }

    /// Removes the values as pending writes: the transaction sees the account's state as it was when it
    /// began, so the keys it removes are exactly those it can see.
    func removeMetadata(keysStartingWith prefix: String, for peer: PeerID) async throws {
        try withOpenState { state in
            var visible = Array(state.base.metadata[peer, default: [:]].keys)
            visible += state.metadata[peer, default: [:]].keys
            for key in visible where key.utf8.starts(with: prefix.utf8) { state.metadata[peer, default: [:]][key] = .some(nil) }
        }
    }

    /// The account's latest position when the transaction started, which no other transaction of the
    /// account can move before this one ends.
    func latestPosition() async throws -> ChangePosition? {
        try withOpenState { state in state.base.latestPosition }
    }

    private func withOpenState<T>(_ body: (inout State) throws -> T) throws -> T {
        try state.withLock { state in
            guard !state.isFinished else {
                throw StoreError(.invalidArgument, "the transaction on account \(account) has already ended")
            }
            return try body(&state)
        }
    }

    /// The committed records of `collection` after `id`, merged in id order
    /// with this transaction's pending writes to it.
    private static func merged(
        _ base: MemoryAccountState, collection: CollectionID, after id: RecordID?,
        pending: [RecordKey: (sequence: Int, write: RecordWrite)], limit: Int
    ) -> [StoredRecord] {
        let pendingIDs = pending.keys.map(\.id).sorted()
        let ids = base.idsByCollection[collection] ?? []
        var baseIndex = id.map { MemoryAccountState.firstIndex(in: ids, after: $0) } ?? 0
        var pendingIndex = 0
        var result: [StoredRecord] = []
        while result.count < limit {
            let nextBase = baseIndex < ids.count ? ids[baseIndex] : nil
            let nextPending = pendingIndex < pendingIDs.count ? pendingIDs[pendingIndex] : nil
            let chosen: RecordID
            switch (nextBase, nextPending) {
            case (nil, nil): return result
            case (let baseID?, nil): chosen = baseID
            case (nil, let pendingID?): chosen = pendingID
            case (let baseID?, let pendingID?): chosen = min(baseID, pendingID)
            }
            if chosen == nextBase { baseIndex += 1 }
            if chosen == nextPending { pendingIndex += 1 }
            let key = RecordKey(collection: collection, id: chosen)
            switch pending[key]?.write {
            case .put(let record):
                result.append(StoredRecord(record: record, position: base.records[key]?.position ?? .start))
            case .purge:
                continue
            case nil:
                if let stored = base.records[key] { result.append(stored) }
            }
        }
        return result
    }
}
