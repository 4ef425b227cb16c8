import Synchronization

/// How a durable store reads its committed data for a ``BufferedTransaction``.
///
/// Every read returns the account's revision as the read's snapshot saw it,
/// or as it was just before the read (never a later one), so the store can
/// refuse to commit a transaction whose reads a concurrent commit made stale.
package protocol CommittedReads: Sendable {
    /// Up to `limit` committed records of `collection` with ids after `id`, in id order, their fields left
    /// in the stored form.
    func records(
        in collection: CollectionID, after id: RecordID?, limit: Int, of account: AccountID
    ) async throws -> ([EncodedStoredRecord], revision: Int64)

    /// The committed metadata value `key` of `peer`, if any.
    func metadata(_ key: String, for peer: PeerID, of account: AccountID) async throws -> (SyncValue?, revision: Int64)

    /// The committed metadata values of `peer` under `keys` (at most ``BufferedTransaction/keysPerRead``), by
    /// key, read on one snapshot together with the account's revision.
    func metadata(at keys: [String], for peer: PeerID, of account: AccountID) async throws -> ([String: SyncValue], revision: Int64)

    /// The committed records at `keys` (at most ``BufferedTransaction/keysPerRead``), by key, their fields
    /// left in the stored form, read on one snapshot together with the account's revision.
    func records(at keys: [RecordKey], of account: AccountID) async throws -> ([RecordKey: EncodedStoredRecord], revision: Int64)

    /// The committed records at `keys` (at most ``BufferedTransaction/keysPerRead``), the committed
    /// metadata value `key` of `peer` and the position of the account's latest write, read on one
    /// snapshot together with the account's revision.
    func records(
        at keys: [RecordKey], metadata key: String, for peer: PeerID, of account: AccountID
    ) async throws -> (([RecordKey: StoredRecord], SyncValue?, latest: ChangePosition), revision: Int64)

    /// The position of the account's latest committed write, with the account's revision.
    func latestPosition(of account: AccountID) async throws -> (ChangePosition, revision: Int64)

    /// Checks that the database can hold `text`, a `what` (for example "record id").
    func requireStorable(_ text: String, _ what: String) throws

    /// The error to report for `error` (a ``StoreError``), met while doing `operation`.
    func storeError(for error: any Error, while operation: String) -> any Error
}

/// A transaction of a durable store: reads committed data overlaid with its
/// own pending writes, and buffers every write until the store commits them
/// in one database transaction.
///
/// Each read also notes the account's revision as that read saw it. The store
/// commits only if the account's revision is still the one every read saw,
/// so a transaction whose reads another process's commit invalidated runs
/// again instead of committing on stale data.
package final class BufferedTransaction: StoreTransaction {
    /// What a finished transaction hands to the store.
    package struct Outcome: Sendable {
        /// The writes to commit.
        package var writes: PendingWrites
        /// The oldest account revision any read saw; `nil` when it read nothing.
        package var oldestRevisionRead: Int64?
        /// Whether every read saw the same revision (no commit of the account happened between reads).
        package var readsAgree: Bool
    }

    private struct State: Sendable {
        var isFinished = false
        var sequence = 0
        var records: [RecordKey: (sequence: Int, write: PendingRecordWrite)] = [:]
        var metadata: [PeerID: [String: PendingMetadataWrite]] = [:]
        /// Committed records already read, `nil` for a key known to be unwritten: a transaction reads each
        /// key from the store once.
        var committed: [RecordKey: StoredRecord?] = [:]
        /// Committed metadata values already read, `nil` for a key known to be unset.
        var committedMetadata: [PeerID: [String: SyncValue?]] = [:]
        /// Prefixes of metadata keys removed, by peer (``removeMetadata(keysStartingWith:for:)``).
        var removedMetadataPrefixes: [PeerID: [String]] = [:]
        /// The position of the account's latest committed write, once a read told it.
        var latestPosition: ChangePosition?

        /// The value this transaction knows for `key` of `peer` without reading: its own write, `nil` under
        /// a removed prefix, or the committed value read before; `nil` (not `.some(nil)`) when unknown.
        func knownMetadata(_ key: String, for peer: PeerID) -> SyncValue?? {
            if let pending = metadata[peer]?[key] { return .some(pending.value) }
            if let prefixes = removedMetadataPrefixes[peer], prefixes.contains(where: { key.utf8.starts(with: $0.utf8) }) {
                return .some(nil)
            }
            return committedMetadata[peer]?[key]
        }
        var oldestRevision: Int64?
        var newestRevision: Int64?
    }

    package let account: AccountID
    private let reads: any CommittedReads
    private let state = Mutex(State())

    /// A transaction on `account` that reads committed data through `reads`.
    package init(account: AccountID, reads: any CommittedReads) {
        self.account = account
        self.reads = reads
    }

    /// Runs `body` on a transaction over `reads` that refuses writes, and returns its result: a durable
    /// store's ``SyncStore/readCommitted(for:_:)``, which takes no lock and checks no revision.
    /// - Throws: What `body` throws, such as the ``StoreError/Code/invalidArgument`` of a write.
    package static func readCommitted<Result: Sendable>(
        account: AccountID, reads: any CommittedReads, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        let transaction = BufferedTransaction(account: account, reads: reads)
        defer { _ = transaction.finish() }
        return try await body(ReadOnlyTransaction(base: transaction))
    }

    /// Runs `body` on a new transaction on `account` that reads committed data through `reads`, then ends
    /// the transaction: what `body` returned, and what it wrote for the store to commit.
    /// - Throws: What `body` throws (the transaction is ended and its writes dropped).
    package static func run<Result: Sendable>(
        account: AccountID, reads: any CommittedReads, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> (result: Result, outcome: Outcome) {
        let transaction = BufferedTransaction(account: account, reads: reads)
        let result: Result
        do {
            result = try await body(transaction)
        } catch {
            _ = transaction.finish()
            throw error
        }
        return (result, transaction.finish())
    }

    /// Ends the transaction and returns what it wrote; later calls on it throw.
    package func finish() -> Outcome {
        state.withLock { state in
            state.isFinished = true
            var writes = PendingWrites()
            // Each write's sequence number is its place (numbers of writes replaced later stay empty):
            // put in order in one pass, where sorting moved each write and its key many times.
            var ordered = [(key: RecordKey, write: PendingRecordWrite)?](repeating: nil, count: state.sequence)
            for (key, pending) in state.records { ordered[pending.sequence - 1] = (key, pending.write) }
            state.records = [:]
            writes.records = ordered.compactMap { $0 }
            for (peer, values) in state.metadata {
                for (key, write) in values { writes.metadata.append((peer: peer, key: key, write: write)) }
            }
            for (peer, prefixes) in state.removedMetadataPrefixes {
                for prefix in prefixes { writes.removedMetadataPrefixes.append((peer: peer, prefix: prefix)) }
            }
            return Outcome(
                writes: writes, oldestRevisionRead: state.oldestRevision,
                readsAgree: state.oldestRevision == state.newestRevision)
        }
    }

    // MARK: Records

    package func record(_ key: RecordKey) async throws -> StoredRecord? {
        // A key this transaction wrote or already read is answered from memory, without the batched
        // read's arrays and dictionaries: a sync's loop over a prefetched page asks once or twice a record.
        let known: StoredRecord?? = try withOpenState { state in
            switch (state.records[key]?.write, state.committed[key]) {
            case (.purge?, _): return .some(nil)
            // A written record carries its committed position.
            case (.put(let encoded)?, let committed?):
                return .some(StoredRecord(record: try encoded.decoded(), position: committed?.position ?? .start))
            case (nil, let committed?): return .some(committed)
            case (_, nil): return nil  // its committed version is not known yet: read it
            }
        }
        if let known { return known }
        return try await records(at: [key])[key]
    }

    /// The most keys one committed read of ``records(at:)`` asks for; more are read in several.
    package static var keysPerRead: Int { 500 }

    package func records(at keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] {
        for key in keys { try requireStorable(key) }
        let unread = try withOpenState { state in Array(Set(keys.filter { state.committed[$0] == nil })) }
        for chunk in try await readCommitted(unread) {
            let found = try chunk.found.mapValues { try $0.decoded() }
            try withOpenState { state in
                for key in chunk.keys where state.committed[key] == nil { state.committed[key] = .some(found[key]) }
            }
        }
        return try withOpenState { state in
            var records: [RecordKey: StoredRecord] = [:]
            for key in keys {
                let committed = state.committed[key] ?? nil
                switch state.records[key]?.write {
                case .put(let encoded): records[key] = StoredRecord(record: try encoded.decoded(), position: committed?.position ?? .start)
                case .purge: break
                case nil: records[key] = committed
                }
            }
            return records
        }
    }

    /// Answers as ``records(at:)`` does, without decoding the fields of records read from the store: a
    /// record this transaction wrote or read before is answered from memory, and the others are read but
    /// not kept (a later read of one of them asks the store again).
    package func encodedRecords(at keys: [RecordKey]) async throws -> [RecordKey: EncodedStoredRecord] {
        for key in keys { try requireStorable(key) }
        let unread = try withOpenState { state in Array(Set(keys.filter { state.committed[$0] == nil })) }
        var read: [RecordKey: EncodedStoredRecord] = [:]
        for chunk in try await readCommitted(unread) { read.merge(chunk.found) { first, _ in first } }
        return try withOpenState { state in
            var records: [RecordKey: EncodedStoredRecord] = [:]
            for key in keys {
                let committed: EncodedStoredRecord?
                if let known = state.committed[key] { committed = try known.map(EncodedStoredRecord.init) } else { committed = read[key] }
                switch state.records[key]?.write {
                case .put(let encoded): records[key] = EncodedStoredRecord(encoded, position: committed?.position ?? .start)
                case .purge: break
                case nil: records[key] = committed
                }
            }
            return records
        }
    }

    /// Reads the committed records at `keys`, at most ``keysPerRead`` a read; each read's keys and what it found.
    private func readCommitted(_ keys: [RecordKey]) async throws -> [(keys: [RecordKey], found: [RecordKey: EncodedStoredRecord])] {
        let (account, reads) = (self.account, self.reads)
        var chunks: [(keys: [RecordKey], found: [RecordKey: EncodedStoredRecord])] = []
        var start = 0
        while start < keys.count {
            let chunk = Array(keys[start..<min(start + Self.keysPerRead, keys.count)])
            let description = chunk.count == 1 ? "reading record \(chunk[0])" : "reading \(chunk.count) records"
            chunks.append((chunk, try await read(description) { try await reads.records(at: chunk, of: account) }))
            start += chunk.count
        }
        return chunks
    }

    package func assumeNeverWritten(_ keys: [RecordKey]) async throws {
        for key in keys { try requireStorable(key) }
        try withOpenState { state in
            for key in keys where state.committed[key] == nil { state.committed[key] = .some(nil) }
        }
    }

    package func records(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [StoredRecord] {
        let page = try await committedPage(of: collection, after: id, limit: limit)
        let committed = try page.committed.map { try $0.decoded() }
        try withOpenState { state in
            for stored in committed where state.committed[stored.record.key] == nil {
                state.committed[stored.record.key] = .some(stored)
            }
        }
        guard !page.pending.isEmpty else { return committed }
        return try Self.merge(committed: committed, pending: page.pending, fetchLimit: page.fetchLimit, limit: limit)
    }

    /// Answers as ``records(in:after:limit:)`` does, without decoding the fields of the records read from
    /// the store, and without keeping them (a later read of one of them asks the store again).
    package func encodedRecords(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [EncodedStoredRecord] {
        let page = try await committedPage(of: collection, after: id, limit: limit)
        guard !page.pending.isEmpty else { return page.committed }
        return try Self.merge(committed: page.committed, pending: page.pending, fetchLimit: page.fetchLimit, limit: limit)
    }

    /// The committed records of a page of `collection` after `id`, read with room for this transaction's
    /// writes to the same range (`pending`) to hide some of them; `fetchLimit` is how many were asked for.
    private func committedPage(
        of collection: CollectionID, after id: RecordID?, limit: Int
    ) async throws -> (committed: [EncodedStoredRecord], pending: [RecordKey: PendingRecordWrite], fetchLimit: Int) {
        guard limit >= 1 else {
            throw StoreError(.invalidArgument, "records(in:after:limit:): limit must be at least 1, got \(limit)")
        }
        try reads.requireStorable(collection.rawValue, "collection")
        if let id { try reads.requireStorable(id.rawValue, "record id") }
        let pending = try withOpenState { state in
            state.records.filter { key, _ in key.collection == collection && id.map { key.id > $0 } ?? true }
                .mapValues(\.write)
        }
        // Each pending write can hide at most one committed record, so this many
        // committed ones always fill the page.
        let fetchLimit = limit > Int.max - pending.count ? Int.max : limit + pending.count
        let (account, reads) = (self.account, self.reads)
        let committed = try await read("reading collection \(collection)") {
            try await reads.records(in: collection, after: id, limit: fetchLimit, of: account)
        }
        return (committed, pending, fetchLimit)
    }

    package func put(_ record: SyncRecord) async throws {
        try await put(EncodedRecord(record))
    }

    package func put(_ encoded: EncodedRecord) async throws {
        try requireStorable(encoded.key)
        try reads.requireStorable(encoded.version.node.rawValue, "node")
        try withOpenState { state in
            state.sequence += 1
            state.records[encoded.key] = (state.sequence, .put(encoded))
        }
    }

    package func purge(_ key: RecordKey) async throws {
        try requireStorable(key)
        try withOpenState { state in
            state.sequence += 1
            state.records[key] = (state.sequence, .purge)
        }
    }

    /// Reads the records at `keys` and the metadata value `key` of `peer` in one committed read when
    /// neither is known yet (a server's push: the pack's records and the device's last pack).
    package func records(
        at keys: [RecordKey], withMetadata key: String, for peer: PeerID
    ) async throws -> (records: [RecordKey: StoredRecord], metadata: SyncValue?) {
        for recordKey in keys { try requireStorable(recordKey) }
        try reads.requireStorable(peer.rawValue, "peer")
        try reads.requireStorable(key, "metadata key")
        let (unread, metadataKnown) = try withOpenState { state in
            (Array(Set(keys.filter { state.committed[$0] == nil })), state.knownMetadata(key, for: peer) != nil)
        }
        if !metadataKnown, !unread.isEmpty, unread.count <= Self.keysPerRead {
            let (account, reads) = (self.account, self.reads)
            let (found, value, latest) = try await read("reading \(unread.count) records and metadata \(key) of peer \(peer)") {
                try await reads.records(at: unread, metadata: key, for: peer, of: account)
            }
            try withOpenState { state in
                state.latestPosition = state.latestPosition ?? latest
                for recordKey in unread where state.committed[recordKey] == nil { state.committed[recordKey] = .some(found[recordKey]) }
                if state.committedMetadata[peer]?[key] == nil { state.committedMetadata[peer, default: [:]][key] = .some(value) }
            }
        }
        // Both are known now, and answered with this transaction's own writes over them.
        return (try await records(at: keys), try await metadata(key, for: peer))
    }

    /// The position the account's latest committed write had when this transaction read it: the one a
    /// batched read of records and metadata told (a server's push asks right after it), else read now.
    package func latestPosition() async throws -> ChangePosition? {
        if let known = try withOpenState({ $0.latestPosition }) { return known }
        let (account, reads) = (self.account, self.reads)
        let latest = try await read("reading the latest position") { try await reads.latestPosition(of: account) }
        return try withOpenState { state in
            state.latestPosition = state.latestPosition ?? latest
            return state.latestPosition
        }
    }

    // MARK: Metadata

    package func metadata(_ key: String, for peer: PeerID) async throws -> SyncValue? {
        if let known = try withOpenState({ state in state.knownMetadata(key, for: peer) }) { return known }
        try reads.requireStorable(peer.rawValue, "peer")
        try reads.requireStorable(key, "metadata key")
        let (account, reads) = (self.account, self.reads)
        let committed = try await read("reading metadata \(key) of peer \(peer)") {
            try await reads.metadata(key, for: peer, of: account)
        }
        // A write may have happened while reading; the latest one wins.
        return try withOpenState { state in
            state.committedMetadata[peer, default: [:]][key] = .some(committed)
            return state.knownMetadata(key, for: peer) ?? committed
        }
    }

    package func metadata(at keys: [String], for peer: PeerID) async throws -> [String: SyncValue] {
        try reads.requireStorable(peer.rawValue, "peer")
        for key in keys { try reads.requireStorable(key, "metadata key") }
        let unread = try withOpenState { state in Array(Set(keys.filter { state.knownMetadata($0, for: peer) == nil })) }
        let (account, reads) = (self.account, self.reads)
        var start = 0
        while start < unread.count {
            let chunk = Array(unread[start..<min(start + Self.keysPerRead, unread.count)])
            start += chunk.count
            let found = try await read("reading \(chunk.count) metadata values of peer \(peer)") {
                try await reads.metadata(at: chunk, for: peer, of: account)
            }
            try withOpenState { state in
                for key in chunk where state.committedMetadata[peer]?[key] == nil {
                    state.committedMetadata[peer, default: [:]][key] = .some(found[key])
                }
            }
        }
        return try withOpenState { state in
            var values: [String: SyncValue] = [:]
            for key in keys {
                if case let value?? = state.knownMetadata(key, for: peer) { values[key] = value }
            }
            return values
        }
    }

    package func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) async throws {
        try reads.requireStorable(peer.rawValue, "peer")
        try reads.requireStorable(key, "metadata key")
        let blob = try value.map { value throws(StoreError) in try StoredValueFormat.encode(value) }
        try withOpenState { state in
            state.metadata[peer, default: [:]][key] = PendingMetadataWrite(value: value, blob: blob)
        }
    }

    /// Drops this transaction's writes under `prefix` and notes the prefix, so that reads under it answer
    /// `nil` until written again and the commit removes the committed values before its own writes.
    package func removeMetadata(keysStartingWith prefix: String, for peer: PeerID) async throws {
        try reads.requireStorable(peer.rawValue, "peer")
        try reads.requireStorable(prefix, "metadata key prefix")
        try withOpenState { state in
            state.metadata[peer] = state.metadata[peer]?.filter { key, _ in !key.utf8.starts(with: prefix.utf8) }
            state.removedMetadataPrefixes[peer, default: []].append(prefix)
        }
    }

    // MARK: Helpers

    /// Runs `query`, which returns a value and the account revision its snapshot saw, and notes the revision.
    private func read<T: Sendable>(
        _ description: String, _ query: @Sendable () async throws -> (T, revision: Int64)
    ) async throws -> T {
        try withOpenState { _ in }
        let value: T
        let revision: Int64
        do {
            (value, revision) = try await query()
        } catch let error as StoreError {
            throw error
        } catch {
            throw reads.storeError(for: error, while: description)
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

    /// Checks that the database can hold both parts of `key`.
    private func requireStorable(_ key: RecordKey) throws {
        try reads.requireStorable(key.collection.rawValue, "collection")
        try reads.requireStorable(key.id.rawValue, "record id")
    }

    /// `committed` (records after the page's start, in id order, fetched with
    /// `fetchLimit`) overlaid with the `pending` writes to the same range, cut to `limit`.
    private static func merge<Record: PagedRecord>(
        committed: [Record], pending: [RecordKey: PendingRecordWrite], fetchLimit: Int, limit: Int
    ) throws -> [Record] {
        var byID: [RecordID: Record] = [:]
        for stored in committed { byID[stored.id] = stored }
        // Committed ids beyond the last fetched one are unknown, so the merged
        // page may only reach that far when the fetch was cut short.
        let horizon = committed.count >= fetchLimit ? committed.last?.id : nil
        for (key, write) in pending {
            if let horizon, key.id > horizon { continue }
            switch write {
            case .put(let encoded):
                byID[key.id] = try Record(written: encoded, position: byID[key.id]?.position ?? .start)
            case .purge:
                byID[key.id] = nil
            }
        }
        return byID.values.sorted { $0.id < $1.id }.prefix(limit).map { $0 }
    }
}

/// A record of a page that ``BufferedTransaction`` merges with its own writes, decoded or not.
private protocol PagedRecord {
    /// The record's id.
    var id: RecordID { get }
    /// The position of the write that produced this version.
    var position: ChangePosition { get }
    /// A record the transaction wrote, at the position of the version it replaces.
    init(written: EncodedRecord, position: ChangePosition) throws
}

extension StoredRecord: PagedRecord {
    fileprivate var id: RecordID { record.id }
    fileprivate init(written: EncodedRecord, position: ChangePosition) throws {
        self.init(record: try written.decoded(), position: position)
    }
}

extension EncodedStoredRecord: PagedRecord {
    fileprivate var id: RecordID { key.id }
    fileprivate init(written: EncodedRecord, position: ChangePosition) {
        self.init(written, position: position)
    }
}
