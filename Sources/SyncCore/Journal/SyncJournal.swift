#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The one tracker of a device's local changes, used by every client: the
/// seed's journal.
///
/// A local write commits its data and its journal entry in one store
/// transaction, so neither exists without the other after a crash:
///
/// ```swift
/// try await store.transaction(for: account) { tx in
///     let before = try await tx.record(key)                      // what the device had
///     try await tx.put(edited)                                   // the data, in the stack's form
///     try await tx.journal.recordLocalChange(
///         .modify, local: neutral(edited), at: clock.now(), basedOn: serverVersion(before))
/// }
/// ```
///
/// ## Rules
/// - An entry holds the action, its time, the item as it is locally, and the
///   **ArchCopy**: the version the change was based on (``JournalEntry/archCopy``).
///   A newer action on the same item replaces the pending entry's action, time
///   and local version but keeps its ArchCopy. The local version is a copy,
///   or — for a stack that stores the item as a record with its own sync
///   columns — the record without them
///   (``recordLocalChange(_:writtenAs:without:at:basedOn:)``).
/// - A sync sends what is ready (``JournalEntry/isReadyToSend``) and, when the
///   server has taken a change, ``acknowledge(_:sequence:holding:)``s it: the
///   entry leaves the journal, or — when the item changed again while the
///   change was in flight — stays, based now on what the server took.
/// - A version arriving from the server for an item with an entry is judged
///   by ``JournalEntry/classify(_:)``: a conflict exactly when the server's
///   version moved away from the ArchCopy to something else than the local
///   version. Clocks play no part.
/// - A conflict the policy defers (ask the user, ``AskUserPolicy``) stays open
///   with the server's version beside the local one (``openConflict(_:remote:)``)
///   until the application ``answer(_:with:)``s it; the next sync carries the
///   answer out.
/// - A change the server refuses for good is ``remove(_:)``d and reported; a
///   failure that may pass keeps every entry (see ``SyncFailureClass``).
///
/// Entries are records of the collection ``collection`` in the device's own
/// account, so they travel in the store's transactions, crash safety and
/// backups with the data; stacks never sync that collection.
public struct SyncJournal: Sendable {
    /// The collection the entries are kept in.
    public static let collection: CollectionID = "anchorage.journal"
    /// The metadata peer of the journal's sequence counter.
    static let peer: PeerID = "anchorage.journal"
    /// The last sequence number handed out.
    static let sequenceKey = MetadataKey<Int64>("sequence", peer: peer)

    /// The transaction the journal reads and writes through.
    public let transaction: any StoreTransaction

    /// The journal as seen through `transaction`.
    public init(_ transaction: any StoreTransaction) {
        self.transaction = transaction
    }

    // MARK: Local changes

    /// Records a local change of `local.key`, in the transaction that writes it.
    ///
    /// With no entry pending, `current` becomes the ArchCopy; with one, the
    /// entry keeps its ArchCopy and its open conflict, takes the new action,
    /// time and local version, and loses an answer given to its conflict (the
    /// application answered about a local version that is no more).
    /// - Parameters:
    ///   - action: What the local write did.
    ///   - local: The item after the change, with the application's fields only.
    ///   - time: When it happened, by the device's clock.
    ///   - current: The server's version the device holds (`nil`: the server does not have the item).
    /// - Returns: The entry now pending.
    /// - Throws: ``StoreError``.
    @discardableResult
    public func recordLocalChange(
        _ action: JournalAction, local: SyncRecord, at time: Date, basedOn current: ServerVersion?
    ) async throws -> JournalEntry {
        let updated = try await pendingUpdated(
            JournalEntry(key: local.key, action: action, recordedAt: time, local: local, archCopy: current, sequence: 0))
        try await write(updated)
        return updated
    }

    /// Records a local change whose local version is `record` — which this transaction wrote — without
    /// its `columns`: the entry names the record instead of copying its fields, so a change costs one
    /// record's worth of bytes, not two. It works as ``recordLocalChange(_:local:at:basedOn:)`` does with
    /// that local version, and asks one thing of the stack: while the entry is pending, the record is
    /// written only together with a new entry (this call or the copying one) or after the entry is
    /// removed. Reading an entry whose record was written otherwise throws ``StoreError/Code/corrupt``.
    ///
    /// ```swift
    /// try await tx.put(stored)                                       // the data, with the stack's columns
    /// try await tx.journal.recordLocalChange(.modify, writtenAs: stored, without: syncColumns, at: now, basedOn: held)
    /// ```
    /// - Parameters:
    ///   - action: What the local write did.
    ///   - record: The record as the transaction wrote it; its version is the local version's.
    ///   - columns: The record's fields that are not the application's (the stack's sync columns).
    ///   - time: When it happened, by the device's clock.
    ///   - current: The server's version the device holds (`nil`: the server does not have the item).
    /// - Throws: ``StoreError``.
    public func recordLocalChange(
        _ action: JournalAction, writtenAs record: SyncRecord, without columns: Set<String>, at time: Date,
        basedOn current: ServerVersion?
    ) async throws {
        let local = SyncRecord(collection: record.collection, id: record.id, fields: [:], version: record.version)
        let updated = try await pendingUpdated(
            JournalEntry(key: record.key, action: action, recordedAt: time, local: local, archCopy: current, sequence: 0))
        try await write(StoredEntry(entry: updated, recordColumns: columns.sorted()))
    }

    /// `change` with the next sequence number, taken together with the entry pending for its key: with
    /// one, the pending entry's ArchCopy and open conflict stay, and its action is followed by the change's.
    private func pendingUpdated(_ change: JournalEntry) async throws -> JournalEntry {
        var updated = change
        updated.sequence = try await nextSequence()
        // The record may already hold the new version: the pending entry is read without its local version.
        if let pending = try await storedEntry(for: change.key)?.entry {
            updated.action = pending.action.followed(by: change.action)
            updated.archCopy = pending.archCopy
            updated.remote = pending.remote
        }
        return updated
    }

    // MARK: Reading

    /// The entry pending for `key`, or `nil`.
    /// - Throws: ``StoreError`` (``StoreError/Code/corrupt`` for an entry this version cannot read).
    public func entry(for key: RecordKey) async throws -> JournalEntry? {
        guard let stored = try await storedEntry(for: key) else { return nil }
        return try await resolved([stored])[0]
    }

    /// The keys of the pending entries, in key order; only those of `collections` when given. Cheaper
    /// than ``entries(in:)`` when the entries themselves are not needed: no local version is read.
    /// - Throws: ``StoreError``.
    public func pendingKeys(in collections: Set<CollectionID>? = nil) async throws -> [RecordKey] {
        var keys: [RecordKey] = []
        for try await stored in transaction.allRecords(in: Self.collection) where !stored.record.isDeleted {
            let key = try JournalEntryFormat.storedEntry(stored.record).entry.key
            if collections?.contains(key.collection) ?? true { keys.append(key) }
        }
        return keys
    }

    /// Reads the entries of the records at `keys` from the store at once, so that a loop over a page
    /// of records that asks ``entry(for:)`` for each does not go to the store each time.
    public func prefetch(_ keys: [RecordKey]) async throws {
        try await transaction.prefetch(keys.map(Self.entryKey))
    }

    /// Tells the transaction that no entry is pending for the records at `keys`, because their ids were
    /// just made (``StoreTransaction/assumeNeverWritten(_:)``): recording their changes then reads nothing.
    public func assumeNoEntries(for keys: [RecordKey]) async throws {
        try await transaction.assumeNeverWritten(keys.map(Self.entryKey))
    }

    /// Every pending entry, in key order; only those of `collections` when given.
    /// - Throws: ``StoreError``.
    public func entries(in collections: Set<CollectionID>? = nil) async throws -> [JournalEntry] {
        var kept: [StoredEntry] = []
        for try await stored in transaction.allRecords(in: Self.collection) where !stored.record.isDeleted {
            let entry = try JournalEntryFormat.storedEntry(stored.record)
            if collections?.contains(entry.entry.key.collection) ?? true { kept.append(entry) }
        }
        return try await resolved(kept)
    }

    /// Up to `limit` pending entries in key order, after the entry of `key` (from the first when `nil`):
    /// a sync that sends many changes reads them page by page, passing the last entry's key, so that
    /// it never holds the whole journal in memory. Fewer than `limit` entries means the end.
    /// - Throws: ``StoreError``.
    public func entries(after key: RecordKey?, limit: Int) async throws -> [JournalEntry] {
        try await resolved(storedEntries(after: key, limit: limit))
    }

    /// Up to `limit` pending changes in key order after the entry of `key`, paged as
    /// ``entries(after:limit:)`` pages entries, without their local versions: what a push reads to send
    /// a pack, with the records themselves. No record is read, so it may run in
    /// ``SyncStore/readCommitted(for:_:)`` beside the transaction that acknowledges the pack before.
    /// Only the fields a pending change needs are read from each entry.
    /// - Throws: ``StoreError``.
    public func pendingChanges(after key: RecordKey?, limit: Int) async throws -> [PendingChange] {
        try await pagedEntries(after: key, limit: limit, JournalEntryFormat.pendingChange)
    }

    /// Up to `limit` pending entries as stored, after the entry of `key`, as ``entries(after:limit:)`` pages them.
    func storedEntries(after key: RecordKey?, limit: Int) async throws -> [StoredEntry] {
        try await pagedEntries(after: key, limit: limit) { stored in try JournalEntryFormat.storedEntry(stored.decoded().record) }
    }

    /// Up to `limit` pending entries after the entry of `key`, each read from its record by `read`.
    private func pagedEntries<Entry>(
        after key: RecordKey?, limit: Int, _ read: (EncodedStoredRecord) throws -> Entry
    ) async throws -> [Entry] {
        let limit = max(1, limit)
        var entries: [Entry] = []
        var cursor = key.map { Self.entryKey($0).id }
        while entries.count < limit {
            let wanted = limit - entries.count
            // A deleted journal record is no pending entry: it is skipped (`remove(_:)` purges, but a
            // store may hold deletions written otherwise), so a page may take more than one read.
            let page = try await transaction.encodedRecords(in: Self.collection, after: cursor, limit: wanted)
            for stored in page where !stored.isDeleted { entries.append(try read(stored)) }
            guard page.count == wanted, let last = page.last else { break }  // a short page is the end
            cursor = last.key.id
        }
        return entries
    }

    /// The conflicts waiting for the application's answer, in key order.
    /// - Throws: ``StoreError``.
    public func openConflicts() async throws -> [SyncConflict] {
        try await entries().compactMap(SyncConflict.init)
    }

    // MARK: Sync

    /// The server took the change sent as `sequence` and now holds `version`.
    ///
    /// The entry leaves the journal when nothing happened to the item since
    /// that change was read for sending; otherwise it stays pending, based on
    /// `version`, which is made only then.
    /// - Returns: whether the entry left the journal.
    /// - Throws: ``StoreError``, or what making `version` throws.
    @discardableResult
    public func acknowledge(
        _ key: RecordKey, sequence: Int64, holding version: @autoclosure () throws -> ServerVersion
    ) async throws -> Bool {
        guard var stored = try await storedEntry(for: key) else { return false }
        if stored.entry.sequence == sequence {
            try await transaction.purge(Self.entryKey(key))
            return true
        }
        stored.entry.archCopy = try version()
        try await write(stored)
        return false
    }

    /// The server took each of `changes`, sent with the sequence each carries: what
    /// ``acknowledge(_:sequence:holding:)`` does for each, with the entries read at once and, for those
    /// that leave the journal, no more of each read than its sequence. `version` makes the version the
    /// server holds of an item whose entry stays (the item changed while its change was in flight).
    /// - Throws: ``StoreError``, or what `version` throws.
    public func acknowledge(_ changes: [PendingChange], holding version: (RecordKey) throws -> ServerVersion) async throws {
        let entries = try await transaction.encodedRecords(at: changes.map { Self.entryKey($0.key) })
        for change in changes {
            let entryKey = Self.entryKey(change.key)
            guard let stored = entries[entryKey], !stored.isDeleted else { continue }
            if try JournalEntryFormat.sequence(of: stored) == change.sequence {
                try await transaction.purge(entryKey)
            } else {
                try await acknowledge(change.key, sequence: change.sequence, holding: try version(change.key))
            }
        }
    }

    /// Takes the entry of `key` out of the journal: the server refused the
    /// change for good, already holds it, or the application took the
    /// server's version.
    /// - Throws: ``StoreError``.
    public func remove(_ key: RecordKey) async throws {
        let entryKey = Self.entryKey(key)
        if try await transaction.record(entryKey) != nil { try await transaction.purge(entryKey) }
    }

    /// Opens a conflict on the pending entry of `key`: `remote` is kept
    /// beside it until the application answers (an earlier answer is dropped).
    /// - Throws: ``StoreError`` (``StoreError/Code/invalidArgument`` when no entry is pending).
    public func openConflict(_ key: RecordKey, remote: ServerVersion) async throws {
        guard var stored = try await storedEntry(for: key) else {
            throw StoreError(.invalidArgument, "no local change of \(key) is pending")
        }
        stored.entry.remote = remote
        stored.entry.answer = nil
        try await write(stored)
    }

    /// Records the application's answer to the open conflict of `key`; the
    /// next sync carries it out.
    /// - Throws: ``StoreError`` (``StoreError/Code/invalidArgument`` when no conflict of `key` is open).
    public func answer(_ key: RecordKey, with answer: ConflictAnswer) async throws {
        guard var stored = try await storedEntry(for: key), stored.entry.remote != nil else {
            throw StoreError(.invalidArgument, "no conflict of \(key) is open")
        }
        stored.entry.answer = answer
        try await write(stored)
    }

    /// Bases the pending change of `key` on the server's version it
    /// conflicted with (keep mine, or a merge): the ArchCopy becomes that
    /// version and the conflict closes, so the next send goes up as a change
    /// of what the server holds.
    /// - Returns: the entry, or `nil` when none is pending.
    /// - Throws: ``StoreError``.
    @discardableResult
    public func rebase(_ key: RecordKey) async throws -> JournalEntry? {
        guard var stored = try await storedEntry(for: key) else { return nil }
        if let remote = stored.entry.remote { stored.entry.archCopy = remote }
        stored.entry.remote = nil
        stored.entry.answer = nil
        try await write(stored)
        return try await resolved([stored])[0]
    }

    /// Bases the pending change of `key` on `version`, which holds what its ArchCopy holds under
    /// another token (the server wrote the same content again); an open conflict keeps its base.
    func rename(_ key: RecordKey, base version: ServerVersion) async throws {
        guard var stored = try await storedEntry(for: key), stored.entry.remote == nil else { return }
        stored.entry.archCopy = version
        try await write(stored)
    }

    // MARK: Storage

    /// The journal record of `key`.
    static func entryKey(_ key: RecordKey) -> RecordKey {
        RecordKey(collection: collection, id: RecordID(key.collection.rawValue + "\u{1F}" + key.id.rawValue))
    }

    private func nextSequence() async throws -> Int64 {
        let next = (try await transaction.metadata(Self.sequenceKey) ?? 0) + 1
        try await transaction.setMetadata(next, Self.sequenceKey)
        return next
    }

    private func write(_ entry: JournalEntry) async throws {
        try await write(StoredEntry(entry: entry, recordColumns: nil))
    }

    private func write(_ stored: StoredEntry) async throws {
        try await transaction.put(JournalEntryFormat.record(stored, key: Self.entryKey(stored.entry.key)))
    }

    /// The entry pending for `key` as stored, without reading the record an entry may name.
    func storedEntry(for key: RecordKey) async throws -> StoredEntry? {
        guard let stored = try await transaction.record(Self.entryKey(key)), !stored.record.isDeleted else { return nil }
        return try JournalEntryFormat.storedEntry(stored.record)
    }

    /// The entries with their local versions: the records that entries name are read at once.
    func resolved(_ entries: [StoredEntry]) async throws -> [JournalEntry] {
        let named = entries.filter(\.namesRecord).map(\.entry.key)
        let records = named.isEmpty ? [:] : try await transaction.records(at: named)
        return try entries.map { try JournalEntryFormat.resolved($0, with: records[$0.entry.key]) }
    }
}

extension StoreTransaction {
    /// The device's journal, read and written in this transaction.
    public var journal: SyncJournal { SyncJournal(self) }
}

extension SyncStore {
    /// The conflicts of `account` waiting for the application's answer, in key order.
    /// - Throws: ``StoreError``.
    public func openConflicts(for account: AccountID) async throws -> [SyncConflict] {
        try await journalEntries(for: account, among: { $0.remote != nil }) { SyncConflict($0) != nil }
            .compactMap(SyncConflict.init)
    }

    /// Carries out, in one transaction, the application's answers to the conflicts of `account` that
    /// `isIncluded` keeps: `carryOut` gets each answered entry, read again in that transaction, with
    /// its answer, and says whether it wrote the server's version locally. The answered entries are
    /// found by paging through the journal (``journalEntries(for:where:)``); with none, no transaction runs.
    /// - Returns: How many times `carryOut` wrote the server's version.
    /// - Throws: What `carryOut` throws (nothing is carried out), or ``StoreError``.
    public func carryOutAnswers(
        for account: AccountID, where isIncluded: @escaping @Sendable (JournalEntry) -> Bool,
        with carryOut: @escaping @Sendable (JournalEntry, ConflictAnswer, any StoreTransaction) async throws -> Bool
    ) async throws -> Int {
        let keys = try await journalEntries(for: account, among: { $0.answer != nil }) { isIncluded($0) }.map(\.key)
        guard !keys.isEmpty else { return 0 }
        return try await transaction(for: account) { tx in
            try await tx.journal.prefetch(keys)
            var written = 0
            for key in keys {
                // Read again in this transaction: the answer may have changed since the scan.
                guard let entry = try await tx.journal.entry(for: key), let answer = entry.answer, isIncluded(entry) else { continue }
                if try await carryOut(entry, answer, tx) { written += 1 }
            }
            return written
        }
    }

    /// The pending journal entries of `account` that `isIncluded` keeps, in key order.
    ///
    /// The journal is read a thousand entries at a time, each page in a transaction of its own, so a
    /// device with a hundred thousand changes waiting never holds them all in memory to find the few it
    /// looks for. The pages are not one snapshot: an entry written meanwhile may be missed or seen.
    /// - Throws: ``StoreError``.
    public func journalEntries(
        for account: AccountID, where isIncluded: @escaping @Sendable (JournalEntry) -> Bool
    ) async throws -> [JournalEntry] {
        try await journalEntries(for: account, among: { _ in true }, where: isIncluded)
    }

    /// The pending journal entries of `account` that `isIncluded` keeps, in key order, looking only at those
    /// that `isCandidate` keeps as stored (before the records that entries name are read): a scan for open
    /// conflicts or answers passes over a hundred thousand pending changes without reading their records.
    func journalEntries(
        for account: AccountID, among isCandidate: @escaping @Sendable (JournalEntry) -> Bool,
        where isIncluded: @escaping @Sendable (JournalEntry) -> Bool
    ) async throws -> [JournalEntry] {
        let pageSize = 1_000
        var kept: [JournalEntry] = []
        var after: RecordKey?
        while true {
            let start = after
            let (page, lastKey, isFull) = try await transaction(for: account) { tx in
                let stored = try await tx.journal.storedEntries(after: start, limit: pageSize)
                let candidates = try await tx.journal.resolved(stored.filter { isCandidate($0.entry) })
                return (candidates, stored.last?.entry.key, stored.count == pageSize)
            }
            kept += page.filter(isIncluded)
            guard isFull, let lastKey else { return kept }
            after = lastKey
        }
    }

    /// Records the application's answer to the open conflict `id` (``SyncConflict/id``,
    /// `collection/id`) of `account`; the next sync carries it out.
    /// - Throws: ``StoreError`` (``StoreError/Code/invalidArgument`` when no such conflict is open).
    public func answerConflict(_ id: String, with answer: ConflictAnswer, for account: AccountID) async throws {
        try await transaction(for: account) { tx in
            guard let conflict = try await tx.journal.openConflicts().first(where: { $0.id == id }) else {
                throw StoreError(.invalidArgument, "no conflict \(id) is open")
            }
            try await tx.journal.answer(conflict.key, with: answer)
        }
    }
}
