import SyncCore

/// A store over ``MemoryStore`` that breaks one rule of the contract on
/// purpose, to show the contract suite notices.
struct FlawedStore: SyncStore {
    enum Flaw: Sendable, CaseIterable {
        /// Drops `null` fields on write.
        case dropsNullFields
        /// Reads inside a transaction do not see its own puts.
        case hidesOwnWrites
        /// A body that throws still commits its writes.
        case commitsOnThrow
        /// Returns the records of a change batch in reverse order.
        case reversesChanges
        /// Never says a batch has more.
        case neverHasMore
        /// Ignores the collection filter.
        case ignoresCollectionFilter
        /// Lists a rewritten record once per write.
        case repeatsRewrites
        /// Keeps every account's data in one.
        case sharesAccounts
        /// Keeps every peer's metadata under one peer.
        case sharesPeers
        /// Purges by writing a tombstone.
        case purgeLeavesTombstone
        /// Treats a limit below 1 as 1.
        case clampsLimits
        /// Commits each read and write on its own, so read-modify-write loses updates.
        case autocommitsEachCall
    }

    let flaw: Flaw
    let base = MemoryStore()
    private let history = Locked<[StoredRecord]>([])

    init(_ flaw: Flaw) { self.flaw = flaw }

    private func account(_ account: AccountID) -> AccountID { flaw == .sharesAccounts ? "shared" : account }

    func transaction<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        let account = self.account(account)
        switch flaw {
        case .commitsOnThrow:
            let outcome = try await base.transaction(for: account) { tx -> Swift.Result<Result, ThrownError> in
                do { return .success(try await body(tx)) } catch { return .failure(ThrownError(error: error)) }
            }
            switch outcome {
            case .success(let result): return result
            case .failure(let thrown): throw thrown.error
            }
        case .hidesOwnWrites:
            let pending = Locked<[SyncRecord]>([])
            let result = try await base.transaction(for: account) { tx in
                try await body(FlawedTransaction(base: tx, flaw: flaw, pendingPuts: pending))
            }
            let puts = pending.value
            try await base.transaction(for: account) { tx in
                for record in puts { try await tx.put(record) }
            }
            return result
        case .autocommitsEachCall:
            return try await body(AutocommitTransaction(store: base, account: account))
        case .repeatsRewrites:
            let result = try await base.transaction(for: account, body)
            try await recordHistory(of: account)
            return result
        default:
            return try await base.transaction(for: account) { tx in
                try await body(FlawedTransaction(base: tx, flaw: flaw, pendingPuts: Locked([])))
            }
        }
    }

    func changes(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> ChangeBatch {
        let limit = flaw == .clampsLimits ? max(1, limit) : limit
        let collections = flaw == .ignoresCollectionFilter ? nil : collections
        var batch = try await base.changes(for: self.account(account), after: position, in: collections, limit: limit)
        switch flaw {
        case .reversesChanges: batch.records.reverse()
        case .neverHasMore: batch.hasMore = false
        case .repeatsRewrites:
            let all = history.value.filter { $0.position > position }
            let records = Array(all.prefix(limit))
            return ChangeBatch(
                records: records, lastPosition: records.last?.position ?? position, hasMore: all.count > limit)
        default: break
        }
        return batch
    }

    func latestPosition(for account: AccountID) async throws -> ChangePosition {
        try await base.latestPosition(for: self.account(account))
    }

    /// Appends the changes not yet in the history, as a log that never forgets an old version would.
    private func recordHistory(of account: AccountID) async throws {
        let last = history.value.last?.position ?? .start
        let batch = try await base.changes(for: account, after: last, in: nil, limit: Int.max)
        history.update { $0 += batch.records }
    }
}

/// An error a body threw, carried out of a transaction that commits anyway.
struct ThrownError: Error {
    let error: any Error
}

/// A transaction that forwards to a real one, breaking one rule.
struct FlawedTransaction: StoreTransaction {
    let base: any StoreTransaction
    let flaw: FlawedStore.Flaw
    let pendingPuts: Locked<[SyncRecord]>

    var account: AccountID { base.account }

    private func peer(_ peer: PeerID) -> PeerID { flaw == .sharesPeers ? "shared" : peer }

    func record(_ key: RecordKey) async throws -> StoredRecord? { try await base.record(key) }

    func records(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [StoredRecord] {
        try await base.records(in: collection, after: id, limit: flaw == .clampsLimits ? max(1, limit) : limit)
    }

    func put(_ record: SyncRecord) async throws {
        switch flaw {
        case .dropsNullFields:
            var record = record
            record.fields = record.fields.filter { $0.value != .null }
            try await base.put(record)
        case .hidesOwnWrites:
            pendingPuts.update { $0.append(record) }
        default:
            try await base.put(record)
        }
    }

    func purge(_ key: RecordKey) async throws {
        guard flaw == .purgeLeavesTombstone else { return try await base.purge(key) }
        guard let stored = try await base.record(key) else { return }
        try await base.put(stored.record.tombstone(version: stored.record.version))
    }

    func metadata(_ key: String, for peer: PeerID) async throws -> SyncValue? {
        try await base.metadata(key, for: self.peer(peer))
    }

    func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) async throws {
        try await base.setMetadata(value, key, for: self.peer(peer))
    }

    func removeMetadata(keysStartingWith prefix: String, for peer: PeerID) async throws {
        try await base.removeMetadata(keysStartingWith: prefix, for: self.peer(peer))
    }
}

/// A "transaction" that runs every call in a transaction of its own.
struct AutocommitTransaction: StoreTransaction {
    let store: MemoryStore
    let account: AccountID

    func record(_ key: RecordKey) async throws -> StoredRecord? {
        let stored = try await store.transaction(for: account) { try await $0.record(key) }
        await Task.yield()
        return stored
    }

    func records(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [StoredRecord] {
        try await store.transaction(for: account) { try await $0.records(in: collection, after: id, limit: limit) }
    }

    func put(_ record: SyncRecord) async throws {
        try await store.transaction(for: account) { try await $0.put(record) }
    }

    func purge(_ key: RecordKey) async throws {
        try await store.transaction(for: account) { try await $0.purge(key) }
    }

    func metadata(_ key: String, for peer: PeerID) async throws -> SyncValue? {
        try await store.transaction(for: account) { try await $0.metadata(key, for: peer) }
    }

    func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) async throws {
        try await store.transaction(for: account) { try await $0.setMetadata(value, key, for: peer) }
    }

    func removeMetadata(keysStartingWith prefix: String, for peer: PeerID) async throws {
        try await store.transaction(for: account) { try await $0.removeMetadata(keysStartingWith: prefix, for: peer) }
    }
}
