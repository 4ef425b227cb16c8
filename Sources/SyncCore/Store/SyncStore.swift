/// Durable, account-scoped storage of records, their change sequence and
/// per-peer sync metadata.
///
/// Every write happens in a transaction: ``transaction(for:_:)`` runs a body
/// that reads and writes through a ``StoreTransaction``; when the body returns
/// everything it wrote commits at once, when it throws nothing is left behind.
/// Every committed record write gets a ``ChangePosition`` greater than any
/// position a reader has already seen, and ``changes(for:after:in:limit:)``
/// returns the records written after a position, tombstones included, in
/// order of position.
///
/// ```swift
/// try await store.transaction(for: "ada") { tx in
///     var record = try await tx.record(RecordKey(collection: "contacts", id: id))?.record ?? .init(…)
///     record.fields["name"] = "Ada"
///     try await tx.put(record)
/// }
/// let batch = try await store.changes(for: "ada", after: lastSeen, in: nil, limit: 500)
/// ```
///
/// ## Rules every implementation follows
/// - **Atomic**: a body that throws leaves nothing behind; a crash leaves
///   either all of a transaction or none of it.
/// - **Serializable**: concurrent transactions behave as if run one after
///   another, so read-modify-write never loses an update. An implementation
///   may run a body more than once (retrying after a serialization conflict),
///   so a body must not have side effects outside the transaction.
/// - **Account-scoped**: a transaction or a change query for one account
///   never sees another account's records or metadata.
/// - **Change sequence**: each record write in a committed transaction gets a
///   position; a record keeps only its latest version and position; a reader
///   that has seen every change up to position P and then asks for changes
///   after P never misses a write that commits later.
///
/// Check an implementation with `StoreContractSuite` from `SyncTesting`.
public protocol SyncStore: Sendable {
    /// Runs `body` in one atomic transaction on `account`'s data and returns its result.
    /// - Throws: what `body` throws (after rolling back), or ``StoreError``.
    func transaction<Result: Sendable>(
        for account: AccountID,
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result

    /// Runs `body` in one atomic transaction on `account`'s data, as ``transaction(for:_:)`` does, and
    /// tells which change positions its commit handed out.
    ///
    /// A server answering an upload learns from them, without reading the store again, whether the
    /// upload's records are the account's newest changes (``uploadPositions(of:committed:for:)``).
    /// - Returns: What `body` returned, and the commit's positions: `nil` when the transaction wrote
    ///   nothing, or when the store cannot tell (the default, for stores written before this method).
    /// - Throws: what `body` throws (after rolling back), or ``StoreError``.
    func transactionWithPositions<Result: Sendable>(
        for account: AccountID,
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> (result: Result, positions: CommittedPositions?)

    /// Runs `body` on `account`'s committed data without waiting for the account's transactions,
    /// and returns its result. Each read sees what is committed when it runs, so two reads may see
    /// different commits (a record or metadata value read again keeps the answer of its first read):
    /// for a reader that needs no snapshot and runs beside a writer of the same account — a push
    /// reading its next pack while the answer to the one before is written down.
    /// `body` must not write.
    ///
    /// A store without such reads runs `body` as a transaction that refuses writes (the default).
    /// - Throws: what `body` throws, ``StoreError/Code/invalidArgument`` when `body` writes (nothing is
    ///   written), or ``StoreError``.
    func readCommitted<Result: Sendable>(
        for account: AccountID,
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result

    /// The records of `account` written after `position`, in order of position,
    /// at most `limit` of them, optionally only from `collections`.
    /// - Throws: ``StoreError`` when the store cannot be read.
    func changes(
        for account: AccountID,
        after position: ChangePosition,
        in collections: Set<CollectionID>?,
        limit: Int
    ) async throws -> ChangeBatch

    /// ``changes(for:after:in:limit:)`` with each record's fields left in the stored form, for a
    /// codec that writes them from that form (a server answering a pull). A store that keeps records
    /// in that form (`SQLiteStore`, `PostgresStore`) reads them without decoding them; the default
    /// encodes what ``changes(for:after:in:limit:)`` returns.
    /// - Throws: ``StoreError`` when the store cannot be read.
    func encodedChanges(
        for account: AccountID,
        after position: ChangePosition,
        in collections: Set<CollectionID>?,
        limit: Int
    ) async throws -> EncodedChangeBatch

    /// The position of the latest committed write of `account` (``ChangePosition/start`` before any).
    /// - Throws: ``StoreError`` when the store cannot be read.
    func latestPosition(for account: AccountID) async throws -> ChangePosition
}

extension SyncStore {
    /// Encodes the fields of what ``changes(for:after:in:limit:)`` returns: the default for a store
    /// that keeps records in another form.
    public func encodedChanges(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> EncodedChangeBatch {
        try EncodedChangeBatch(encoding: await changes(for: account, after: position, in: collections, limit: limit))
    }

    /// Runs the transaction without telling its positions: the default for a store that cannot.
    public func transactionWithPositions<Result: Sendable>(
        for account: AccountID,
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> (result: Result, positions: CommittedPositions?) {
        (try await transaction(for: account, body), nil)
    }

    /// Runs `body` as a transaction that refuses writes: the default for a store without reads that
    /// skip its transactions.
    public func readCommitted<Result: Sendable>(
        for account: AccountID,
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        try await transaction(for: account) { tx in try await body(ReadOnlyTransaction(base: tx)) }
    }
}

/// A store that tells the change positions of every commit, as the built-in stores do: it implements
/// ``SyncStore/transactionWithPositions(for:_:)``, and its ``SyncStore/transaction(for:_:)`` runs that and
/// leaves the positions out.
///
/// A conforming store must implement ``SyncStore/transactionWithPositions(for:_:)`` itself: the default
/// that ``SyncStore`` gives it runs ``SyncStore/transaction(for:_:)``, which would run it again, without end.
public protocol PositionTellingStore: SyncStore {}

extension PositionTellingStore {
    /// Runs ``SyncStore/transactionWithPositions(for:_:)`` and returns what `body` returned.
    /// - Throws: What ``SyncStore/transactionWithPositions(for:_:)`` throws.
    public func transaction<Result: Sendable>(
        for account: AccountID,
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        try await transactionWithPositions(for: account, body).result
    }
}

/// A store that keeps each record's fields in the stored form, as `SQLiteStore` and `PostgresStore` do: it
/// reads its changes in that form (``SyncStore/encodedChanges(for:after:in:limit:)``), and its
/// ``SyncStore/changes(for:after:in:limit:)`` decodes them.
///
/// A conforming store must implement ``SyncStore/encodedChanges(for:after:in:limit:)`` itself: the default
/// that ``SyncStore`` gives it encodes ``SyncStore/changes(for:after:in:limit:)``, which would read them
/// again, without end.
public protocol StoredFormStore: SyncStore {}

extension StoredFormStore {
    /// Decodes the fields of what ``SyncStore/encodedChanges(for:after:in:limit:)`` reads.
    /// - Throws: What ``SyncStore/encodedChanges(for:after:in:limit:)`` throws, or what decoding a record's
    ///   fields throws.
    public func changes(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> ChangeBatch {
        try ChangeBatch(decoding: await encodedChanges(for: account, after: position, in: collections, limit: limit))
    }
}

/// A transaction of ``SyncStore/readCommitted(for:_:)``: the reads of `base`, and an error for every write.
package struct ReadOnlyTransaction: StoreTransaction {
    let base: any StoreTransaction

    package init(base: any StoreTransaction) {
        self.base = base
    }

    package var account: AccountID { base.account }

    package func record(_ key: RecordKey) async throws -> StoredRecord? { try await base.record(key) }

    package func records(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [StoredRecord] {
        try await base.records(in: collection, after: id, limit: limit)
    }

    package func records(at keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] { try await base.records(at: keys) }

    package func records(
        at keys: [RecordKey], withMetadata key: String, for peer: PeerID
    ) async throws -> (records: [RecordKey: StoredRecord], metadata: SyncValue?) {
        try await base.records(at: keys, withMetadata: key, for: peer)
    }

    package func encodedRecords(at keys: [RecordKey]) async throws -> [RecordKey: EncodedStoredRecord] {
        try await base.encodedRecords(at: keys)
    }

    package func encodedRecords(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [EncodedStoredRecord] {
        try await base.encodedRecords(in: collection, after: id, limit: limit)
    }

    package func assumeNeverWritten(_ keys: [RecordKey]) async throws { try await base.assumeNeverWritten(keys) }

    package func put(_ record: SyncRecord) async throws { throw Self.refusal }

    package func put(_ encoded: EncodedRecord) async throws { throw Self.refusal }

    package func purge(_ key: RecordKey) async throws { throw Self.refusal }

    package func metadata(_ key: String, for peer: PeerID) async throws -> SyncValue? { try await base.metadata(key, for: peer) }

    package func metadata(at keys: [String], for peer: PeerID) async throws -> [String: SyncValue] {
        try await base.metadata(at: keys, for: peer)
    }

    package func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) async throws { throw Self.refusal }

    package func removeMetadata(keysStartingWith prefix: String, for peer: PeerID) async throws { throw Self.refusal }

    private static var refusal: StoreError {
        StoreError(.invalidArgument, "a read of committed data cannot write; writes belong in transaction(for:_:)")
    }
}

/// The change positions one commit handed out: its record writes took the positions after
/// ``before``, up to ``latest``, in the order written, and nothing else of the account did.
public struct CommittedPositions: Sendable, Hashable {
    /// The position right before the commit's first record write (the account's latest before the
    /// commit, in a store whose positions count per account).
    public var before: ChangePosition
    /// The position of the commit's last record write; ``before`` when it wrote no record.
    public var latest: ChangePosition

    /// Positions `before` + 1 … `latest`.
    public init(before: ChangePosition, latest: ChangePosition) {
        self.before = before
        self.latest = latest
    }

    /// How many record writes took a position.
    public var recordWrites: UInt64 { latest.rawValue - before.rawValue }
}

/// Reads and writes inside one store transaction.
///
/// Reads see the transaction's own earlier writes. Positions are assigned
/// when the transaction commits, so ``StoredRecord/position`` of a record
/// written in this transaction is not known until then.
public protocol StoreTransaction: Sendable {
    /// The account this transaction is scoped to.
    var account: AccountID { get }

    /// The record at `key`, tombstone included, or `nil` if it was never written.
    func record(_ key: RecordKey) async throws -> StoredRecord?

    /// Records of a collection in id order, starting after `id` (for paging), at most `limit`.
    func records(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [StoredRecord]

    /// The records at `keys`, tombstones included, by key; a key never written has no entry.
    ///
    /// The same answer as ``record(_:)`` for each key, in as few reads as the
    /// store can manage: a sync that handles a page of records asks for all
    /// of them at once rather than one round trip each. Stores that cannot
    /// batch get the default, which reads one key at a time.
    func records(at keys: [RecordKey]) async throws -> [RecordKey: StoredRecord]

    /// The records at `keys` and the metadata value `key` of `peer`: the same answers as
    /// ``records(at:)`` and ``metadata(_:for:)``, in one read where the store can make one (the SQLite
    /// and PostgreSQL stores), so that a server handling a push reads what the push touches and the
    /// entry that says whether it came before in one round trip. Stores that cannot get the default,
    /// which asks the two in turn.
    func records(
        at keys: [RecordKey], withMetadata key: String, for peer: PeerID
    ) async throws -> (records: [RecordKey: StoredRecord], metadata: SyncValue?)

    /// The records at `keys` as ``records(at:)`` answers, with their fields left in the stored form: for
    /// code that passes records on without looking into their fields, such as a device's push, which
    /// writes them into its pack from that form (``EncodedStoredRecord``). The SQLite and PostgreSQL
    /// stores read them without decoding their fields; other stores get the default, which encodes
    /// what ``records(at:)`` answers.
    func encodedRecords(at keys: [RecordKey]) async throws -> [RecordKey: EncodedStoredRecord]

    /// The page ``records(in:after:limit:)`` answers, with the records' fields left in the stored form: for
    /// code that reads a few fields of many records, such as the journal listing its pending changes.
    /// Stores that keep records in another form get the default, which encodes that page.
    func encodedRecords(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [EncodedStoredRecord]

    /// Tells the transaction that the records at `keys` were never written, because their ids were
    /// just made (a new UUID each), so that reading them need not ask the database.
    ///
    /// A record the store does hold at one of `keys` reads as missing in this transaction afterwards;
    /// a write to it still replaces it. Stores that read nothing ahead get the default, which does nothing.
    func assumeNeverWritten(_ keys: [RecordKey]) async throws

    /// Writes a record (insert or replace). A tombstone is written with `isDeleted` set.
    func put(_ record: SyncRecord) async throws

    /// Writes a record whose fields were encoded before the transaction (insert or replace): the same
    /// write as ``put(_:)-(SyncRecord)``, without the encoding. Stores that keep records in another
    /// form get the default, which writes ``EncodedRecord/decoded()``.
    func put(_ encoded: EncodedRecord) async throws

    /// Removes a record without leaving a tombstone: for purging tombstones
    /// every peer has seen. Peers that have not synced since will not learn of it.
    func purge(_ key: RecordKey) async throws

    /// A metadata value stored for `peer` under `key`, or `nil`.
    func metadata(_ key: String, for peer: PeerID) async throws -> SyncValue?

    /// The metadata values stored for `peer` under `keys`, by key; a key without a value has no entry.
    ///
    /// The same answer as ``metadata(_:for:)`` for each key, in as few reads as the store can manage
    /// (the SQLite and PostgreSQL stores ask for up to 500 keys in one query): for bookkeeping kept as a
    /// value per item, such as an id map, of which a sync reads the entries of the items it handles.
    /// Stores that cannot batch get the default, which reads one key at a time.
    func metadata(at keys: [String], for peer: PeerID) async throws -> [String: SyncValue]

    /// Stores (or, with `nil`, removes) a metadata value for `peer` under `key`.
    func setMetadata(_ value: SyncValue?, _ key: String, for peer: PeerID) async throws

    /// Removes every metadata value of `peer` whose key starts with `prefix` (compared as UTF-8 bytes):
    /// the committed ones and those this transaction wrote before; values it writes afterwards are kept.
    /// For bookkeeping kept as a value per item that is dropped all at once, such as an id map that a
    /// slow sync starts again.
    func removeMetadata(keysStartingWith prefix: String, for peer: PeerID) async throws

    /// The position of the account's latest committed write as this transaction sees it, which stays
    /// the latest until the transaction commits (a commit of the account in between makes the store run
    /// the transaction again, or fail it): for a write on condition that nothing changed since a
    /// position, such as Aquasync's push on condition, decided in the transaction that writes.
    ///
    /// The SQLite and PostgreSQL stores answer from the read of ``records(at:withMetadata:for:)`` when
    /// one came first, without another query. Stores that cannot tell get the default, `nil`: the caller
    /// then asks ``SyncStore/latestPosition(for:)`` before the transaction.
    func latestPosition() async throws -> ChangePosition?
}

extension StoreTransaction {
    /// `nil`: the default for a store whose transactions cannot tell the latest position.
    public func latestPosition() async throws -> ChangePosition? { nil }

    /// Reads the keys one at a time with ``record(_:)``: the default for a
    /// store that has no batched read.
    public func records(at keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] {
        var found: [RecordKey: StoredRecord] = [:]
        for key in keys where found[key] == nil {
            if let stored = try await record(key) { found[key] = stored }
        }
        return found
    }

    /// Reads the keys one at a time with ``metadata(_:for:)``: the default for a store that has no batched read.
    public func metadata(at keys: [String], for peer: PeerID) async throws -> [String: SyncValue] {
        var found: [String: SyncValue] = [:]
        for key in keys where found[key] == nil {
            if let value = try await metadata(key, for: peer) { found[key] = value }
        }
        return found
    }

    /// Asks ``records(at:)`` and ``metadata(_:for:)`` in turn: the default for a store that cannot read both at once.
    public func records(
        at keys: [RecordKey], withMetadata key: String, for peer: PeerID
    ) async throws -> (records: [RecordKey: StoredRecord], metadata: SyncValue?) {
        (try await records(at: keys), try await metadata(key, for: peer))
    }

    /// Encodes what ``records(at:)`` answers: the default for a store that keeps records in another form.
    public func encodedRecords(at keys: [RecordKey]) async throws -> [RecordKey: EncodedStoredRecord] {
        try await records(at: keys).mapValues(EncodedStoredRecord.init)
    }

    /// Encodes the page ``records(in:after:limit:)`` answers: the default for a store that keeps records in another form.
    public func encodedRecords(in collection: CollectionID, after id: RecordID?, limit: Int) async throws -> [EncodedStoredRecord] {
        try await records(in: collection, after: id, limit: limit).map(EncodedStoredRecord.init)
    }

    /// Does nothing: a store without a read-ahead asks the database for each key anyway.
    public func assumeNeverWritten(_ keys: [RecordKey]) async throws {}

    /// Writes ``EncodedRecord/decoded()`` with ``put(_:)-(SyncRecord)``: the default for a store that keeps
    /// records in another form than the encoded one.
    public func put(_ encoded: EncodedRecord) async throws {
        try await put(encoded.decoded())
    }

    /// Reads the records at `keys` ahead of a loop that asks ``record(_:)`` for each of them.
    ///
    /// A transaction of the SQLite and PostgreSQL stores keeps every record it has read, so the loop's
    /// reads are answered without going to the database again; elsewhere this only reads ahead.
    public func prefetch(_ keys: [RecordKey]) async throws {
        _ = try await records(at: keys)
    }
}

/// A page of the change sequence.
public struct ChangeBatch: Sendable, Hashable {
    /// The changed records, in order of position.
    public var records: [StoredRecord]
    /// The position to ask after next time: that of the last record, or the
    /// position asked after when there are none.
    public var lastPosition: ChangePosition
    /// Whether more changes follow (the batch stopped at the limit).
    public var hasMore: Bool

    /// Makes a batch.
    public init(records: [StoredRecord], lastPosition: ChangePosition, hasMore: Bool) {
        self.records = records
        self.lastPosition = lastPosition
        self.hasMore = hasMore
    }
}

extension ChangeBatch {
    /// Checks the `limit` of a query of the change sequence, ``SyncStore/changes(for:after:in:limit:)`` or
    /// ``SyncStore/encodedChanges(for:after:in:limit:)``.
    /// - Throws: ``StoreError/Code/invalidArgument`` when `limit` is below 1.
    package static func requireValidLimit(_ limit: Int) throws {
        guard limit >= 1 else {
            throw StoreError(.invalidArgument, "changes: limit must be at least 1, got \(limit)")
        }
    }
}

/// A store bound to one account, so code holding it cannot reach another's data.
///
/// Servers make one per request from the authenticated account.
public struct AccountStore: Sendable {
    /// The store.
    public let store: any SyncStore
    /// The account every call is scoped to.
    public let account: AccountID

    /// Binds `store` to `account`.
    public init(_ store: any SyncStore, account: AccountID) {
        self.store = store
        self.account = account
    }

    /// Runs `body` in one atomic transaction on this account's data.
    /// - Throws: what `body` throws, or ``StoreError``.
    public func transaction<Result: Sendable>(
        _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        try await store.transaction(for: account, body)
    }

    /// This account's changes after `position`.
    /// - Throws: ``StoreError``.
    public func changes(
        after position: ChangePosition, in collections: Set<CollectionID>? = nil, limit: Int = 1_000
    ) async throws -> ChangeBatch {
        try await store.changes(for: account, after: position, in: collections, limit: limit)
    }

    /// The position of this account's latest write.
    /// - Throws: ``StoreError``.
    public func latestPosition() async throws -> ChangePosition {
        try await store.latestPosition(for: account)
    }
}

extension SyncStore {
    /// This store bound to `account`.
    public func scoped(to account: AccountID) -> AccountStore { AccountStore(self, account: account) }
}

/// Why a store operation failed.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The database cannot be opened, read or written (I/O error, disk full, connection lost).
        public static let unavailable = Code("store unavailable")
        /// Concurrent transactions collided and retries were exhausted.
        public static let conflict = Code("transaction conflict")
        /// The stored data is not what this version of Anchorage expects.
        public static let corrupt = Code("corrupt data")
        /// The call was not valid (a limit below 1, a record too large).
        public static let invalidArgument = Code("invalid argument")
        /// The write would take the account over its quota of records or bytes (see ``QuotaStore``);
        /// nothing of the transaction was stored.
        public static let quotaExceeded = Code("quota exceeded")
        /// The disk (or the store's configured size limit) is full: nothing of
        /// the transaction was stored; it may pass when space is freed.
        public static let storageFull = Code("storage full")
        /// The code's name.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, for a person.
    public var message: String
    /// The error of the database library, if any.
    public var underlying: (any Error)?

    /// Makes an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
