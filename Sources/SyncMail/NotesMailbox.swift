#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SyncCore
public import SyncIMAP

/// What one ``NotesMailbox/sync()`` did.
public struct NotesSyncReport: Sendable, Hashable {
    /// Notes added, changed or deleted on the device from the server.
    public var pulled = 0
    /// Local changes sent to the server.
    public var pushed = 0
    /// Conflicts the policy decided.
    public var conflicts = 0
    /// Conflicts left open for the application (a deferring policy).
    public var openConflicts = 0
    /// Whether the mailbox was read in full (first sync, or its UIDVALIDITY changed).
    public var fullResync = false
}

/// The notes of one mailbox, kept in a local store and synced with the IMAP server.
///
/// ```swift
/// let notes = NotesMailbox(account: account, mailbox: "Notes", store: try SQLiteStore(path: "notes.sqlite"), device: "phone-7")
/// try await notes.save(Note(title: "Groceries", body: "eggs"))
/// let report = try await notes.sync()
/// ```
///
/// Each version of a note is one message; an edit appends the new message and
/// then expunges the old one, so a reader sees the old or the new version, never
/// none. The store keeps the notes (collection `mail/<mailbox>`), the mailbox's
/// UIDVALIDITY, HIGHESTMODSEQ and last UID, and which UID holds which note.
/// A sync selects the mailbox with QRESYNC: vanished UIDs delete their notes,
/// changed flags update them, messages above the last UID are read. When
/// UIDVALIDITY changed, every UID is forgotten and the mailbox read in full; notes
/// are matched by their id, so nothing is duplicated. Local changes go through the
/// journal: a note changed on the server and on the device since they last agreed
/// is a conflict the ``ConflictPolicy`` decides (keep both makes the local version
/// a new note).
public actor NotesMailbox {
    /// The IMAP account.
    public let account: IMAPAccount
    /// The mailbox's name.
    public let mailbox: String
    /// The local store.
    public let store: any SyncStore
    /// This device's name, written into each message it appends.
    public let device: String
    /// Decides conflicts.
    public let policy: any ConflictPolicy
    /// Stamps the device's writes.
    public nonisolated let clock: any WallClock
    /// How a connection that could not be made, or broke, is made again (``IMAPError/isTransient``):
    /// the attempts and the waits between them, none begun ``SyncCore/RetryPolicy/maxElapsed`` after the first.
    public let retry: RetryPolicy
    /// The clock the waits between attempts are slept on: a test passes a `TestClock`.
    public let sleeper: any Clock<Duration>
    /// The account in the local store.
    public nonisolated var storeAccount: AccountID { AccountID(account.name) }
    /// The collection the notes are kept in.
    public nonisolated var collection: CollectionID { CollectionID("mail/" + mailbox) }
    private nonisolated var peer: PeerID { PeerID("mail/" + mailbox) }
    private let configuration: IMAPConnection.Configuration
    private var connection: IMAPConnection?

    /// Makes the mailbox's notes.
    public init(
        account: IMAPAccount, mailbox: String = "Notes", store: any SyncStore, device: String,
        policy: any ConflictPolicy = NewestWinsPolicy(), configuration: IMAPConnection.Configuration = .init(),
        clock: any WallClock = SystemWallClock(), retry: RetryPolicy = .default, sleeper: any Clock<Duration> = ContinuousClock()
    ) {
        self.account = account
        self.mailbox = mailbox
        self.store = store
        self.device = device
        self.policy = policy
        self.clock = clock
        self.retry = retry
        self.sleeper = sleeper
        self.configuration = configuration
    }

    // MARK: Local notes

    /// The notes on the device, by title then id.
    public func notes() async throws -> [Note] {
        let collection = self.collection
        let records = try await store.transaction(for: storeAccount) { tx in
            var all: [SyncRecord] = []
            var after: RecordID?
            while true {
                let page = try await tx.records(in: collection, after: after, limit: 500)
                all += page.map(\.record)
                guard page.count == 500, let last = page.last else { break }
                after = last.record.id
            }
            return all
        }
        return records.filter { !$0.isDeleted }.compactMap(Self.note).sorted { ($0.title, $0.id) < ($1.title, $1.id) }
    }

    /// The note `id`, or `nil`.
    public func note(_ id: String) async throws -> Note? {
        let key = RecordKey(collection: collection, id: RecordID(id))
        let stored = try await store.transaction(for: storeAccount) { tx in try await tx.record(key) }
        guard let record = stored?.record, !record.isDeleted else { return nil }
        return Self.note(record)
    }

    /// Saves a note on the device (added or edited); the next sync sends it.
    public func save(_ note: Note) async throws {
        let (record, now) = (record(of: note), clock.now())
        try await store.transaction(for: storeAccount) { tx in
            let before = try await tx.record(record.key)
            let exists = before.map { !$0.record.isDeleted } ?? false
            try await tx.put(record)
            try await tx.journal.recordLocalChange(
                exists ? .modify : .add, local: record, at: now, basedOn: before.map { ServerVersion(record: $0.record) })
        }
    }

    /// Deletes the note `id` on the device; the next sync deletes it on the server.
    /// - Throws: ``IMAPError`` when there is no such note.
    public func delete(_ id: String) async throws {
        let key = RecordKey(collection: collection, id: RecordID(id))
        let (device, now) = (device, clock.now())
        try await store.transaction(for: storeAccount) { tx in
            guard let before = try await tx.record(key), !before.record.isDeleted else { throw IMAPError(.commandFailed, "there is no note \(id)") }
            let tombstone = before.record.tombstone(version: RecordVersion(modifiedAt: now, node: PeerID(device)))
            try await tx.put(tombstone)
            try await tx.journal.recordLocalChange(.delete, local: tombstone, at: now, basedOn: ServerVersion(record: before.record))
        }
    }

    /// The conflicts waiting for the application's answer (a deferring policy).
    public func openConflicts() async throws -> [SyncConflict] {
        try await store.openConflicts(for: storeAccount).filter { $0.key.collection == collection }
    }

    // MARK: Sync

    /// Carries out the application's answers to this mailbox's conflicts (``SyncCore/SyncStore/answerConflict(_:with:for:)``).
    /// - Returns: How many server versions were written locally.
    private func carryOutAnswers() async throws -> Int {
        let (collection, writer) = (collection, ConflictWriting(device: device, clock: clock))
        return try await store.carryOutAnswers(for: storeAccount) { $0.key.collection == collection } writer: { _ in writer }
    }

    /// Syncs with the server: what changed there comes down, local changes go up.
    /// - Throws: ``IMAPError`` when the server cannot be reached or refuses; ``StoreError``.
    /// A second sync started while one runs waits for it (``SyncCore/SyncGate``).
    @discardableResult
    public func sync() async throws -> NotesSyncReport {
        try await syncGate.run {
            // A connection that could not be made or broke is made again as `retry` says; a refusal is not retried.
            let elapsed = RetryPolicy.stopwatch(on: sleeper)
            var random = SystemRandomNumberGenerator()
            var attempt = 1
            while true {
                do {
                    return try await syncOnce()
                } catch let error as IMAPError where error.isTransient {
                    await connection?.close()
                    connection = nil
                    guard let wait = retry.waitAfterNoAnswer(attempt: attempt, elapsed: elapsed(), using: &random)
                    else { throw error }
                    try await sleeper.sleep(for: wait)
                    attempt += 1
                }
            }
        }
    }

    /// Lets one ``sync()`` run at a time.
    package nonisolated let syncGate = SyncGate()

    /// Closes the connection to the server.
    public func close() async {
        await connection?.logout()
        connection = nil
    }

    private func connected() async throws -> IMAPConnection {
        if let connection { return connection }
        let made = try await account.connect(configuration: configuration)
        try await made.create(mailbox)
        connection = made
        return made
    }

    /// The mailbox's state as the store keeps it.
    private struct LocalState: Sendable {
        var uidValidity: UInt32 = 0
        var highestModSeq: UInt64 = 0
        var lastUID: UInt32 = 0
        /// UID → note id.
        var uids: [UInt32: String] = [:]
    }

    private func syncOnce() async throws -> NotesSyncReport {
        var report = NotesSyncReport()
        report.pulled = try await carryOutAnswers()
        let imap = try await connected()
        var state = try await loadState()
        let known = IMAPSequenceSet(state.uids.keys)
        let hasQResync = await imap.capabilities.contains("QRESYNC")
        let qresync = state.uidValidity != 0 && state.highestModSeq > 0 && hasQResync
        var changes = try await imap.select(
            mailbox, qresync: qresync ? (state.uidValidity, state.highestModSeq, known.isEmpty ? nil : known) : nil)
        guard let selected = await imap.selected else { throw IMAPError("SELECT \(mailbox) reported nothing") }
        if selected.uidValidity != state.uidValidity || !qresync {
            // First sync, a server without QRESYNC, or UIDs that mean nothing any more: read everything.
            report.fullResync = selected.uidValidity != state.uidValidity
            state = LocalState(uidValidity: selected.uidValidity)
            changes = IMAPChanges()
        }
        let fresh = try await imap.uidFetch(IMAPSequenceSet([(state.lastUID + 1)...UInt32.max]), items: "(UID FLAGS MODSEQ BODY.PEEK[])")
        let newMessages = fresh.fetches.filter { ($0.uid ?? 0) > state.lastUID && $0.body != nil }
        // Flag changes of messages already known (QRESYNC reported them), and messages gone.
        let flagChanges = changes.fetches.filter { fetch in fetch.uid.map { state.uids[$0] != nil } ?? false }
        let vanished = changes.vanished.numbers(largest: selected.uidNext, limit: 1_000_000).filter { state.uids[$0] != nil }
        let seenModSeq = selected.highestModSeq ?? 0
        let wasFull = report.fullResync || state.lastUID == 0

        try await applyIncoming(
            state: state, newMessages: newMessages, flagChanges: flagChanges, vanished: vanished, full: wasFull,
            modSeq: seenModSeq, report: &report)
        try await pushLocalChanges(on: imap, report: &report)
        return report
    }

    private func loadState() async throws -> LocalState {
        let peer = self.peer
        return try await store.transaction(for: storeAccount) { tx in
            var state = LocalState()
            if case .unsignedInteger(let value)? = try await tx.metadata("uidvalidity", for: peer) { state.uidValidity = UInt32(truncatingIfNeeded: value) }
            if case .unsignedInteger(let value)? = try await tx.metadata("highestmodseq", for: peer) { state.highestModSeq = value }
            if case .unsignedInteger(let value)? = try await tx.metadata("lastuid", for: peer) { state.lastUID = UInt32(truncatingIfNeeded: value) }
            if case .dictionary(let map)? = try await tx.metadata("uids", for: peer) {
                for (uid, note) in map { if let uid = UInt32(uid), case .string(let id) = note { state.uids[uid] = id } }
            }
            return state
        }
    }

    private static func saveState(_ state: LocalState, peer: PeerID, in tx: any StoreTransaction) async throws {
        try await tx.setMetadata(.unsignedInteger(UInt64(state.uidValidity)), "uidvalidity", for: peer)
        try await tx.setMetadata(.unsignedInteger(state.highestModSeq), "highestmodseq", for: peer)
        try await tx.setMetadata(.unsignedInteger(UInt64(state.lastUID)), "lastuid", for: peer)
        try await tx.setMetadata(.dictionary(Dictionary(uniqueKeysWithValues: state.uids.map { (String($0.key), .string($0.value)) })), "uids", for: peer)
    }

    /// Applies what the server reported in one store transaction, with the mailbox's new state.
    private func applyIncoming(
        state: LocalState, newMessages: [IMAPFetch], flagChanges: [IMAPFetch], vanished: [UInt32], full: Bool, modSeq: UInt64,
        report: inout NotesSyncReport
    ) async throws {
        let (collection, peer, policy) = (collection, peer, policy)
        let writer = ConflictWriting(device: device, clock: clock)
        let counts = try await store.transaction(for: storeAccount) { tx -> NotesSyncReport in
            var state = state
            var counts = NotesSyncReport()
            // Of the new messages of one note, the last appended holds its latest version: a replace is an
            // APPEND then an EXPUNGE, so a reader may see both, and the later one is the writer's intent.
            var newest: [String: (uid: UInt32, record: SyncRecord)] = [:]
            for fetch in newMessages.sorted(by: { ($0.uid ?? 0) < ($1.uid ?? 0) }) {
                guard let uid = fetch.uid, let body = fetch.body else { continue }
                state.lastUID = max(state.lastUID, uid)
                guard let decoded = NoteMessage.decode(body) else { continue }
                if (fetch.flags ?? []).contains(where: { $0.lowercased() == "\\deleted" }) { continue }
                newest[decoded.note.id] = (uid, Self.record(of: decoded, flags: fetch.flags ?? [], collection: collection))
                state.uids[uid] = decoded.note.id
            }
            // Every UID of a note stays mapped (an edit expunges them all); the highest holds its version.
            var noteUID: [String: UInt32] = [:]
            for (uid, note) in state.uids { noteUID[note] = max(noteUID[note] ?? 0, uid) }
            for (note, incoming) in newest.sorted(by: { $0.key < $1.key }) where noteUID[note] == incoming.uid {
                if try await Self.take(incoming.record, uid: incoming.uid, tx: tx, policy: policy, writer: writer, counts: &counts) {
                    counts.pulled += 1
                }
            }
            // Flags changed on messages already known.
            for fetch in flagChanges {
                guard let uid = fetch.uid, let note = state.uids[uid], noteUID[note] == uid, let flags = fetch.flags else { continue }
                let key = RecordKey(collection: collection, id: RecordID(note))
                guard let base = try await Self.serverVersion(nil, tx: tx, key: key, collection: collection) else { continue }
                if flags.contains(where: { $0.lowercased() == "\\deleted" }) { continue }
                var record = base
                record.fields["flags"] = .array(Self.cleanFlags(flags).map { .string($0) })
                guard record.fields != base.fields else { continue }
                if try await Self.take(record, uid: uid, tx: tx, policy: policy, writer: writer, counts: &counts) { counts.pulled += 1 }
            }
            // Messages gone: their notes are deleted unless a newer message holds them.
            var gone = Set(vanished)
            if full {
                // Read in full: every note of the store that no message holds is gone.
                let held = Set(state.uids.values)
                var after: RecordID?
                while true {
                    let page = try await tx.records(in: collection, after: after, limit: 500)
                    for stored in page where !stored.record.isDeleted && !held.contains(stored.record.id.rawValue) {
                        if let entry = try await tx.journal.entry(for: stored.record.key), entry.archCopy == nil { continue }  // never sent
                        let tombstone = stored.record.tombstone(version: stored.record.version)
                        if try await Self.take(tombstone, uid: 0, tx: tx, policy: policy, writer: writer, counts: &counts) { counts.pulled += 1 }
                    }
                    guard page.count == 500, let last = page.last else { break }
                    after = last.record.id
                }
            }
            for uid in gone.sorted() {
                guard let note = state.uids[uid] else { continue }
                state.uids[uid] = nil
                guard noteUID[note] == uid else { continue }
                let key = RecordKey(collection: collection, id: RecordID(note))
                guard let base = try await Self.serverVersion(nil, tx: tx, key: key, collection: collection), !base.isDeleted else { continue }
                let tombstone = base.tombstone(version: base.version)
                if try await Self.take(tombstone, uid: uid, tx: tx, policy: policy, writer: writer, counts: &counts) { counts.pulled += 1 }
            }
            gone.removeAll()
            state.highestModSeq = modSeq
            try await Self.saveState(state, peer: peer, in: tx)
            return counts
        }
        report.pulled += counts.pulled
        report.conflicts += counts.conflicts
    }

    /// The server's version of a note as the device last had it: the journal's ArchCopy when a
    /// change is pending, else the stored record.
    private static func serverVersion(_ stored: SyncRecord?, tx: any StoreTransaction, key: RecordKey, collection: CollectionID) async throws -> SyncRecord? {
        if let entry = try await tx.journal.entry(for: key) { return entry.remote?.record ?? entry.archCopy?.record }
        if let stored { return stored }
        return try await tx.record(key)?.record
    }

    /// Takes a server version of a note: stored when nothing local is pending; otherwise the
    /// journal judges it and the policy decides a conflict (``SyncCore/SyncJournal/take(_:pending:policy:writer:)``).
    /// - Returns: Whether the device's note changed.
    private static func take(
        _ incoming: SyncRecord, uid: UInt32, tx: any StoreTransaction, policy: any ConflictPolicy, writer: ConflictWriting,
        counts: inout NotesSyncReport
    ) async throws -> Bool {
        let version = ServerVersion(record: incoming, token: .unsignedInteger(UInt64(uid)))
        guard let entry = try await tx.journal.entry(for: incoming.key) else {
            let current = try await tx.record(incoming.key)?.record
            if current == nil && incoming.isDeleted { return false }
            if let current, current.fields == incoming.fields && current.isDeleted == incoming.isDeleted { return false }
            try await tx.put(incoming)
            return true
        }
        let outcome = try await tx.journal.take(version, pending: entry, policy: policy, writer: writer)
        if outcome.isConflict { counts.conflicts += 1 }
        return outcome != .agreed && outcome.wroteServerVersion
    }

    /// How the device writes a conflict's decision: a note the device writes again is stamped by this
    /// device, no earlier than the server's version; a note kept twice gets a new id.
    struct ConflictWriting: ConflictWriter {
        /// This device's name.
        let device: String
        /// The device's clock.
        let clock: any WallClock

        func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
            try await tx.put(remote.record)
        }

        func writeLocalVersion(
            _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
        ) async throws {
            let now = clock.now()
            var mine = version
            mine.version = RecordVersion(modifiedAt: max(now, remote.record.version.modifiedAt), node: PeerID(device))
            if !mine.isDeleted && !merged { mine.fields["modified"] = .date(mine.version.modifiedAt) }
            try await tx.put(mine)
            try await tx.journal.recordLocalChange(mine.isDeleted ? .delete : .modify, local: mine, at: now, basedOn: nil)
        }

        func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
            var copy = local
            copy.id = RecordID(TimeOrderedUUID.make().uuidString)
            try await tx.put(copy)
            try await tx.journal.recordLocalChange(.add, local: copy, at: clock.now(), basedOn: nil)
        }
    }

    /// Flags `uids` `\Deleted` and expunges them.
    private func expunge(_ uids: [UInt32], on imap: IMAPConnection) async throws {
        let set = IMAPSequenceSet(uids)
        guard !set.isEmpty else { return }
        try await imap.uidStore(set, "+FLAGS", flags: ["\\Deleted"])
        try await imap.uidExpunge(set)
    }

    /// Sends the journal's ready entries: an APPEND of the note's new version, then the expunge of its old message.
    private func pushLocalChanges(on imap: IMAPConnection, report: inout NotesSyncReport) async throws {
        let (collection, peer) = (collection, peer)
        let entries = try await store.transaction(for: storeAccount) { tx in
            try await tx.journal.entries(in: [collection]).filter(\.isReadyToSend)
        }
        report.openConflicts = try await openConflicts().count
        guard !entries.isEmpty else { return }
        for entry in entries {
            let state = try await loadState()
            let old = state.uids.filter { $0.value == entry.key.id.rawValue }.map(\.key)
            var appendedUID: UInt32?
            if !entry.local.isDeleted, let note = Self.note(entry.local) {
                let message = NoteMessage.encode(note, from: account.user, device: device)
                let appended = try await imap.append(mailbox, flags: note.flags.filter { $0.hasPrefix("\\") ? $0 != "\\Recent" : true }, message: message)
                appendedUID = appended?.uid
            }
            let newUID = appendedUID
            if !old.isEmpty { try await expunge(old, on: imap) }
            try await store.transaction(for: storeAccount) { tx in
                var state = state
                for uid in old { state.uids[uid] = nil }
                if let newUID { state.uids[newUID] = entry.key.id.rawValue }
                try await Self.saveState(state, peer: peer, in: tx)
                try await tx.journal.acknowledge(
                    entry.key, sequence: entry.sequence, holding: ServerVersion(record: entry.local, token: newUID.map { .unsignedInteger(UInt64($0)) }))
            }
            report.pushed += 1
        }
    }

    // MARK: Records

    private func record(of note: Note) -> SyncRecord {
        // Times to the millisecond, as messages carry them, so a version read back equals the one sent.
        let (created, modified) = (Self.milliseconds(note.created), Self.milliseconds(note.modified))
        let fields: [String: SyncValue] = [
            "title": .string(note.title), "body": .string(note.body), "html": .bool(note.isHTML),
            "flags": .array(Self.cleanFlags(note.flags).map { .string($0) }),
            "created": .date(created), "modified": .date(modified),
        ]
        return SyncRecord(
            collection: collection, id: RecordID(note.id), fields: fields, version: RecordVersion(modifiedAt: modified, node: PeerID(device)))
    }

    private static func milliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: Double(NoteMessage.milliseconds(date)) / 1_000)
    }

    private static func record(of decoded: NoteMessage.Decoded, flags: [String], collection: CollectionID) -> SyncRecord {
        let note = decoded.note
        let fields: [String: SyncValue] = [
            "title": .string(note.title), "body": .string(note.body), "html": .bool(note.isHTML),
            "flags": .array(cleanFlags(flags).map { .string($0) }),
            "created": .date(note.created), "modified": .date(note.modified),
        ]
        return SyncRecord(
            collection: collection, id: RecordID(note.id), fields: fields,
            version: RecordVersion(modifiedAt: note.modified, node: PeerID(decoded.device ?? "mail")))
    }

    /// The note a record holds, or `nil` for a record that is no note.
    static func note(_ record: SyncRecord) -> Note? {
        guard case .string(let title)? = record.fields["title"], case .string(let body)? = record.fields["body"] else { return nil }
        var flags: [String] = []
        if case .array(let values)? = record.fields["flags"] { flags = values.compactMap { if case .string(let flag) = $0 { flag } else { nil } } }
        var created = record.version.modifiedAt
        if case .date(let date)? = record.fields["created"] { created = date }
        var modified = record.version.modifiedAt
        if case .date(let date)? = record.fields["modified"] { modified = date }
        var html = false
        if case .bool(let value)? = record.fields["html"] { html = value }
        return Note(id: record.id.rawValue, title: title, body: body, isHTML: html, flags: flags, created: created, modified: modified)
    }

    /// Flags worth keeping with a note: sorted, without `\Recent` and `\Deleted`.
    static func cleanFlags(_ flags: [String]) -> [String] {
        Set(flags.filter { !["\\recent", "\\deleted"].contains($0.lowercased()) }).sorted()
    }
}
