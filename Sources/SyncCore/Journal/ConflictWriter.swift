#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The part of conflict handling that belongs to a stack: how a decision is written to its store.
///
/// The journal judges a server version that meets a pending change and carries out the decision
/// (``SyncJournal/take(_:pending:policy:writer:)``, ``SyncJournal/carryOut(_:of:writer:)``): it
/// classifies, asks the policy, opens, rebases and removes entries. Whenever the decision writes an
/// item, it calls the stack's writer, which stores the item in the stack's own form:
///
/// ```swift
/// struct NoteWriter: ConflictWriter {
///     func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
///         try await tx.put(remote.record)                       // the sync's own write
///     }
///     func writeLocalVersion(
///         _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
///     ) async throws {
///         try await tx.put(version)                             // stamped after remote by the stack's rule
///         try await tx.journal.recordLocalChange(
///             version.isDeleted ? .delete : .modify, local: version, at: clock.now(), basedOn: nil)
///     }
///     func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
///         let copy = SyncRecord(collection: local.collection, id: RecordID(TimeOrderedUUID.make().uuidString),
///                               fields: local.fields, version: local.version)
///         try await tx.put(copy)
///         try await tx.journal.recordLocalChange(.add, local: copy, at: clock.now(), basedOn: nil)
///     }
/// }
/// ```
///
/// Every method runs inside the sync's store transaction, after the journal has already done its part,
/// so the record and its entry change together (docs/journal.md, rule 1).
public protocol ConflictWriter: Sendable {
    /// The conflict as the policy sees it. By default the entry's local version, the server's
    /// version and the ArchCopy as base, resolved on the client; a stack whose policies read its own
    /// columns (Aquasync's flat deltas) shows them here.
    func conflict(between entry: JournalEntry, and remote: ServerVersion, in tx: any StoreTransaction) async throws -> Conflict

    /// Writes the server's version as the device's copy of the item: the sync's own write, not a local
    /// change. Called for *theirs* and the first half of *both*, after the entry left the journal.
    func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws

    /// Writes what the server holds when it already holds the device's version (*same as local*), after
    /// the entry left the journal. By default ``writeServerVersion(_:over:in:)``.
    func writeAgreement(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws

    /// Writes `version` as a local change based on the server's version `remote` (*mine* and *merged*):
    /// the stack stamps it so that it supersedes `remote`, stores it in its form and records it in the
    /// journal, whose entry is already based on `remote` (so `basedOn: nil` keeps that base).
    /// The change is a `delete` when `version` is a deletion, else a `modify` (the journal folds it into
    /// the pending action: an `add` stays an `add`).
    /// - Parameters:
    ///   - version: The local version (*mine*) or the merged one (*merged*), in neutral form.
    ///   - merged: Whether `version` is a merge of both versions rather than the local one.
    ///   - remote: The server's version the change supersedes.
    ///   - tx: The sync's transaction.
    func writeLocalVersion(
        _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
    ) async throws

    /// Writes `local` as a new item under a new id, recorded in the journal as an `add`: the second half
    /// of *both*. Not called for a local deletion.
    func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws

    /// Whether both versions can be kept: `false` when the stack cannot hold them side by side (two
    /// appSync objects with the same primary key); the conflict then stays open for another answer.
    /// By default `true`.
    func canKeepBoth(_ entry: JournalEntry, and remote: ServerVersion, in tx: any StoreTransaction) async throws -> Bool
}

extension ConflictWriter {
    /// The entry's local version against the server's, with the ArchCopy as base, resolved on the client.
    public func conflict(between entry: JournalEntry, and remote: ServerVersion, in tx: any StoreTransaction) async throws -> Conflict {
        Conflict(local: entry.local, remote: remote.record, base: entry.archCopy?.record, resolvingSide: .client)
    }

    /// ``writeServerVersion(_:over:in:)``.
    public func writeAgreement(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
        try await writeServerVersion(remote, over: entry, in: tx)
    }

    /// `true`.
    public func canKeepBoth(_ entry: JournalEntry, and remote: ServerVersion, in tx: any StoreTransaction) async throws -> Bool {
        true
    }
}

/// What became of a server version that met a pending local change
/// (``SyncJournal/take(_:pending:policy:writer:)``).
public enum ServerVersionOutcome: Sendable, Hashable {
    /// The server still holds the ArchCopy: nothing was written, and the local change goes up.
    case unchanged
    /// The server already holds the device's version: the entry left the journal and the server's
    /// version was written (``ConflictWriter/writeAgreement(_:over:in:)``).
    case agreed
    /// A conflict the policy decided; `carriedOut` is `false` when the writer could not carry the
    /// answer out (``ConflictWriter/canKeepBoth(_:and:in:)``) and the conflict stays open.
    case decided(ConflictAnswer, carriedOut: Bool)
    /// A conflict that waits for the application's answer: new, or an open one that now shows a newer
    /// server version.
    case opened
    /// A conflict already open with the same server version: nothing changed.
    case stillOpen

    /// Whether the server's version met a conflict (decided, opened or still open).
    public var isConflict: Bool {
        switch self {
        case .unchanged, .agreed: false
        case .decided, .opened, .stillOpen: true
        }
    }

    /// Whether the device's copy of the item now holds the server's version, wholly or in part:
    /// *agreed*, or a carried-out *theirs*, *both* or *merged*.
    public var wroteServerVersion: Bool {
        switch self {
        case .agreed: true
        case .decided(let answer, let carriedOut): carriedOut && answer != .keepMine
        case .unchanged, .opened, .stillOpen: false
        }
    }
}

extension SyncJournal {
    /// Takes `incoming`, the server's version of an item whose local change `entry` is pending — the
    /// journal's rules 4 to 6, the same in every stack:
    ///
    /// - the server already holds the device's version → the entry leaves, the server's version is
    ///   written (``ServerVersionOutcome/agreed``);
    /// - no conflict is open and the server still holds the ArchCopy → nothing is written; when the
    ///   server names it anew (another token), the change is based on that name from now on
    ///   (``ServerVersionOutcome/unchanged``);
    /// - a conflict is open with the same server version → nothing happens
    ///   (``ServerVersionOutcome/stillOpen``);
    /// - otherwise a conflict: it opens (an open one shows `incoming` from now on), the policy decides,
    ///   and its decision is carried out (``carryOut(_:of:writer:)``) or, when it defers, left for the
    ///   application (``ServerVersionOutcome/opened``).
    ///
    /// ```swift
    /// if let entry = try await tx.journal.entry(for: key) {
    ///     let outcome = try await tx.journal.take(incoming, pending: entry, policy: policy, writer: writer)
    ///     if outcome.isConflict { report.conflicts += 1 }
    /// } else {
    ///     try await tx.put(incoming.record)                     // nothing local is pending
    /// }
    /// ```
    /// - Throws: ``StoreError``, or what the writer throws.
    public func take(
        _ incoming: ServerVersion, pending entry: JournalEntry, policy: any ConflictPolicy, writer: some ConflictWriter
    ) async throws -> ServerVersionOutcome {
        let relation = entry.classify(incoming)
        if relation == .sameAsLocal {
            try await remove(entry.key)
            try await writer.writeAgreement(incoming, over: entry, in: transaction)
            return .agreed
        }
        if let open = entry.remote {
            if open.hasSameContent(as: incoming.record) { return .stillOpen }
        } else if relation == .unchanged {
            // The ArchCopy's content under a newer name: the change is based on that name from now on.
            if incoming.token != entry.archCopy?.token { try await rename(entry.key, base: incoming) }
            return .unchanged
        }
        try await openConflict(entry.key, remote: incoming)
        var opened = entry
        opened.remote = incoming
        opened.answer = nil
        let conflict = try await writer.conflict(between: opened, and: incoming, in: transaction)
        guard let answer = ConflictAnswer(await policy.resolve(conflict), localIsDeleted: entry.local.isDeleted) else {
            return .opened
        }
        return .decided(answer, carriedOut: try await carryOut(answer, of: opened, writer: writer))
    }

    /// Carries out `answer` to the open conflict of `entry` (whose ``JournalEntry/remote`` is the
    /// server's version) — rule 6:
    ///
    /// - *mine*: the entry is based on the server's version and the local version is written again as
    ///   a change of it (``ConflictWriter/writeLocalVersion(_:merged:over:in:)``);
    /// - *merged*: the same, with the merged fields;
    /// - *theirs*: the entry leaves and the server's version is written;
    /// - *both*: the entry leaves, the server's version is written, and the local version becomes a new
    ///   item (``ConflictWriter/writeCopy(of:in:)``) unless it is a deletion.
    ///
    /// - Returns: `false` when nothing was carried out: no conflict is open, or the writer cannot keep
    ///   both versions (the conflict then stays open, waiting for another answer).
    /// - Throws: ``StoreError``, or what the writer throws.
    @discardableResult
    public func carryOut(_ answer: ConflictAnswer, of entry: JournalEntry, writer: some ConflictWriter) async throws -> Bool {
        guard let remote = entry.remote else { return false }
        switch answer {
        case .keepMine:
            try await rebase(entry.key)
            try await writer.writeLocalVersion(entry.local, merged: false, over: remote, in: transaction)
        case .merged(let fields):
            try await rebase(entry.key)
            var merged = entry.local
            merged.fields = fields
            merged.isDeleted = false
            try await writer.writeLocalVersion(merged, merged: true, over: remote, in: transaction)
        case .takeTheirs:
            try await remove(entry.key)
            try await writer.writeServerVersion(remote, over: entry, in: transaction)
        case .keepBoth:
            guard try await writer.canKeepBoth(entry, and: remote, in: transaction) else {
                if entry.answer != nil { try await openConflict(entry.key, remote: remote) }
                return false
            }
            try await remove(entry.key)
            try await writer.writeServerVersion(remote, over: entry, in: transaction)
            if !entry.local.isDeleted { try await writer.writeCopy(of: entry.local, in: transaction) }
        }
        return true
    }
}

extension SyncStore {
    /// Carries out, in one transaction, the application's answers to the conflicts of `account` that
    /// `isIncluded` keeps, through the stack's writer (``SyncJournal/carryOut(_:of:writer:)``).
    /// - Parameters:
    ///   - account: The device's account in the store.
    ///   - isIncluded: Which answered entries to carry out (the stack's collections).
    ///   - writer: Makes the stack's writer for the transaction the answers are carried out in.
    /// - Returns: How many answers wrote the server's version locally (*theirs*, *both*, *merged*).
    /// - Throws: What the writer throws (nothing is carried out), or ``StoreError``.
    public func carryOutAnswers<Writer: ConflictWriter>(
        for account: AccountID, where isIncluded: @escaping @Sendable (JournalEntry) -> Bool,
        writer: @escaping @Sendable (any StoreTransaction) async throws -> Writer
    ) async throws -> Int {
        try await carryOutAnswers(for: account, where: isIncluded) { entry, answer, tx in
            let carried = try await tx.journal.carryOut(answer, of: entry, writer: try await writer(tx))
            return carried && answer != .keepMine
        }
    }
}

/// The writer of a stack that keeps its items as they sync — neutral records, the application's
/// fields only — such as the NotesStack example: the server's version is stored as it came, and a
/// version the device writes again is stamped by this device, at the clock's time or just after the
/// server's version, whichever is later, so that it supersedes it on every node.
///
/// ```swift
/// let writer = RecordConflictWriter(node: "phone-7", clock: clock)
/// let outcome = try await tx.journal.take(incoming, pending: entry, policy: policy, writer: writer)
/// ```
public struct RecordConflictWriter: ConflictWriter {
    /// The device's node: the writer of the versions it stamps.
    public var node: PeerID
    /// The device's clock.
    public var clock: any WallClock

    /// Makes the writer of the device `node`.
    public init(node: PeerID, clock: any WallClock = SystemWallClock()) {
        self.node = node
        self.clock = clock
    }

    /// Stores the server's version as it came.
    public func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
        try await tx.put(remote.record)
    }

    /// Stores `version` stamped by this device after the server's version, and records it.
    public func writeLocalVersion(
        _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
    ) async throws {
        let now = clock.now()
        var written = version
        written.version = RecordVersion(
            modifiedAt: max(now, remote.record.version.modifiedAt.addingTimeInterval(0.001)), node: node)
        try await tx.put(written)
        try await tx.journal.recordLocalChange(written.isDeleted ? .delete : .modify, local: written, at: now, basedOn: nil)
    }

    /// Stores `local` under a new time-ordered id, as a new item of this device.
    public func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
        let now = clock.now()
        let copy = SyncRecord(
            collection: local.collection, id: RecordID(TimeOrderedUUID.make().uuidString.lowercased()), fields: local.fields,
            version: RecordVersion(modifiedAt: now, node: node))
        try await tx.put(copy)
        try await tx.journal.recordLocalChange(.add, local: copy, at: now, basedOn: nil)
    }
}
