#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SyncCore

/// The records of an Aquasync device, kept with their sync columns in a
/// local ``SyncStore``: what the application reads and writes, with or
/// without the network. ``AquasyncClient`` syncs them.
///
/// ```swift
/// let records = AquasyncLocalRecords(store: try SQLiteStore(path: "device.sqlite"))
/// let gid = try await records.save("Contact", fields: ["name": "Ada"])
/// ```
///
/// A write stamps `localTimestamp` with the clock, at least one millisecond
/// after the version it replaces, so a local edit always supersedes what it
/// edited, and records the change in the device's journal (``SyncCore/SyncJournal``)
/// in the same transaction: neither the data nor the entry is stored without
/// the other. A record is dirty while its journal entry is pending.
public struct AquasyncLocalRecords: Sendable {
    /// The local store.
    public let store: any SyncStore
    /// The account the records live under in ``store``.
    public let account: AccountID
    /// The wall clock that stamps `localTimestamp`.
    public let clock: any WallClock

    /// The metadata peer for the device's own state: its token and `latestUST`.
    static let deviceState: PeerID = "aquasync.device"
    /// The local-only column an earlier version of the library marked a
    /// record whose change waited to be pushed with; the journal does that now.
    static let legacyDirtyColumn = "isDirty"
    /// Whether the records marked with ``legacyDirtyColumn`` have been taken into the journal.
    static let legacyDirtyAdopted = MetadataKey<Bool>("journalAdoptedDirtyRecords", peer: deviceState)
    /// The device's token.
    static let deviceTokenKey = MetadataKey<String>("deviceToken", peer: deviceState)
    /// The update sequence timestamp the device has pulled up to.
    static let latestUSTKey = MetadataKey<Int64>("latestUST", peer: deviceState)

    /// Makes the view of a device's records.
    public init(store: any SyncStore, account: AccountID = "device", clock: any WallClock = SystemWallClock()) {
        self.store = store
        self.account = account
        self.clock = clock
    }

    /// This device's token: a lowercase UUID made on first use and kept in the store.
    public func deviceToken() async throws -> String {
        try await store.transaction(for: account) { tx in
            if let token = try await tx.metadata(Self.deviceTokenKey) { return token }
            let token = UUID().uuidString.lowercased()
            try await tx.setMetadata(token, Self.deviceTokenKey)
            return token
        }
    }

    /// Creates or replaces a record's fields and journals the change.
    /// - Parameters:
    ///   - model: The model, such as `Contact`.
    ///   - gid: The record's id; a new lowercase UUID in time order (``SyncCore/TimeOrderedUUID``) when `nil`.
    ///   - fields: The application's fields; names cannot be sync columns or start with `_`.
    /// - Returns: The record's gid.
    @discardableResult
    public func save(_ model: String, gid: String? = nil, fields: [String: SyncValue]) async throws -> String {
        try await save(model, [(gid, fields)])[0]
    }

    /// Creates or replaces many records of `model` in one transaction — all of them or, when one is
    /// invalid or the store fails, none — and journals each change: an import's path.
    /// - Parameters:
    ///   - model: The model, such as `Contact`.
    ///   - records: Each record's id (a new lowercase UUID in time order when `nil`) and fields, as ``save(_:gid:fields:)`` takes them.
    /// - Returns: The records' gids, in the order given.
    @discardableResult
    public func save(_ model: String, _ records: [(gid: String?, fields: [String: SyncValue])]) async throws -> [String] {
        try await save(prepare(model, records))
    }

    /// Checks and encodes records of `model` for ``save(_:)-(PreparedWrites)``, outside any transaction, so
    /// a writer of many batches prepares the next one while the store commits the last (as
    /// `anchorage records import` does). Nothing is written.
    /// - Parameters:
    ///   - model: The model, such as `Contact`.
    ///   - records: Each record's id (a new lowercase UUID in time order when `nil`) and fields, as ``save(_:gid:fields:)`` takes them.
    /// - Throws: ``AquasyncValidationError`` when the model, a gid or a field name is not allowed; ``SyncCore/StoreError``.
    public func prepare(_ model: String, _ records: [(gid: String?, fields: [String: SyncValue])]) async throws -> PreparedWrites {
        guard DeltaPack.isValidModelName(model) else { throw AquasyncValidationError("\"\(model)\" is not a model name") }
        var writes: [Write] = []
        writes.reserveCapacity(records.count)
        for (gid, fields) in records {
            if let bad = fields.keys.first(where: { Delta.syncColumns.contains($0) || $0 == Self.legacyDirtyColumn || $0.hasPrefix("_") }) {
                throw AquasyncValidationError("\"\(bad)\" is a sync column or starts with '_': choose another field name")
            }
            guard let gid else {
                writes.append(Write(gid: TimeOrderedUUID.make().uuidString.lowercased(), fields: fields, isDeleted: false, isNew: true))
                continue
            }
            guard isLowercaseUUID(gid) else { throw AquasyncValidationError("gid must be a lowercase UUID") }
            writes.append(Write(gid: gid, fields: fields, isDeleted: false, isNew: false))
        }
        return try await prepared(model, writes)
    }

    /// Writes the records ``prepare(_:_:)`` made ready in one transaction — all of them or, when the
    /// store fails, none — and journals each change: the same writes as ``save(_:_:)``.
    /// - Returns: The records' gids, in the order given.
    /// - Throws: ``AquasyncValidationError`` when they were prepared for another account (they carry its
    ///   device token); ``SyncCore/StoreError``.
    @discardableResult
    public func save(_ prepared: PreparedWrites) async throws -> [String] {
        try await write(prepared)
        return prepared.writes.map(\.encoded.key.id.rawValue)
    }

    /// Soft-deletes a record and journals the change; its fields are cleared.
    public func delete(_ model: String, gid: String) async throws {
        try await write(prepared(model, [Write(gid: gid, fields: [:], isDeleted: true, isNew: false)]))
    }

    /// The record `gid` of `model`, deleted or not, or `nil` if this device never saw it.
    public func object(_ model: String, gid: String) async throws -> AquasyncObject? {
        try await store.transaction(for: account) { tx in
            let key = StoredDelta.key(model, gid)
            guard let stored = try await tx.record(key) else { return nil }
            return try Self.object(stored, model: model, isDirty: try await tx.journal.entry(for: key) != nil)
        }
    }

    /// The records of `model` that are not deleted, in gid order.
    public func objects(_ model: String) async throws -> [AquasyncObject] {
        try await store.transaction(for: account) { tx in
            let collection = StoredDelta.collection(for: model)
            let dirty = Set(try await tx.journal.pendingKeys(in: [collection]))
            var objects: [AquasyncObject] = []
            for try await stored in tx.allRecords(in: collection) where !stored.record.isDeleted {
                objects.append(try Self.object(stored, model: model, isDirty: dirty.contains(stored.record.key)))
            }
            return objects
        }
    }

    /// The update sequence timestamp this device has pulled up to.
    public func latestUST() async throws -> Int64 {
        try await store.transaction(for: account) { tx in
            try await tx.metadata(Self.latestUSTKey) ?? 0
        }
    }

    /// One version to write: a record's fields or its deletion; `isNew` when its gid was just made.
    private struct Write: Sendable {
        var gid: String
        var fields: [String: SyncValue]
        var isDeleted: Bool
        var isNew: Bool
    }

    /// Records checked and encoded by ``AquasyncLocalRecords/prepare(_:_:)``, for ``AquasyncLocalRecords/save(_:)-(PreparedWrites)``.
    public struct PreparedWrites: Sendable {
        /// One version, stamped with the clock when it was prepared, and encoded. (The record's fields are
        /// the delta's wire form without `ust`; the delta itself is not kept, so a batch's values are freed
        /// where it was prepared, not in the transaction.)
        struct Write: Sendable {
            var encoded: EncodedRecord
            var localTimestamp: Int64
            var isDeleted: Bool
            /// Whether its gid was just made, so no record or journal entry has it.
            var isNew: Bool
        }

        /// The account they were prepared for, with its device token.
        let account: AccountID
        let model: String
        let writes: [Write]
        /// When they were prepared: the journal entries' time.
        let now: Date

        /// How many records there are.
        public var count: Int { writes.count }
    }

    /// `writes` stamped with the clock and encoded. The device token is read without the account's lock
    /// (made, once, in a transaction of its own), so a batch is prepared while another commits.
    private func prepared(_ model: String, _ writes: [Write]) async throws -> PreparedWrites {
        let existingToken = try await store.readCommitted(for: account) { tx in try await tx.metadata(Self.deviceTokenKey) }
        let token: String
        if let existingToken { token = existingToken } else { token = try await deviceToken() }
        let now = clock.now()
        let timestamp = Delta.milliseconds(now)
        let ready = try writes.map { write in
            let delta = Delta(gid: write.gid, deviceToken: token, localTimestamp: timestamp, isDeleted: write.isDeleted, fields: write.fields)
            return PreparedWrites.Write(
                encoded: try EncodedRecord(StoredDelta.record(delta, model: model)), localTimestamp: timestamp, isDeleted: write.isDeleted,
                isNew: write.isNew)
        }
        return PreparedWrites(account: account, model: model, writes: ready, now: now)
    }

    /// Writes each prepared version in one transaction and journals it, stamped after the version it
    /// replaces (encoded again in the rare case that version is not older than the preparation).
    private func write(_ prepared: PreparedWrites) async throws {
        guard prepared.account == account else {
            throw AquasyncValidationError("these records were prepared for account \(prepared.account), not \(account)")
        }
        let (model, writes, now) = (prepared.model, prepared.writes, prepared.now)
        let (store, account) = (store, account)
        try await store.transaction(for: account) { tx in
            // The first write to an account that holds nothing: no earlier version of the library wrote
            // here, so there are no dirty marks to adopt, and the first sync need not scan for them.
            if try await tx.metadata(Self.legacyDirtyAdopted) != true, try await store.latestPosition(for: account) == .start {
                try await tx.setMetadata(true, Self.legacyDirtyAdopted)
            }
            // A gid just made names no record and no journal entry: only the others are read ahead.
            let given = writes.filter { !$0.isNew }.map(\.encoded.key)
            let made = writes.filter(\.isNew).map(\.encoded.key)
            try await tx.prefetch(given)
            try await tx.journal.prefetch(given)
            try await tx.assumeNeverWritten(made)
            try await tx.journal.assumeNoEntries(for: made)
            for write in writes {
                var encoded = write.encoded
                var held: Delta?
                if !write.isNew, let existing = try await tx.record(encoded.key) {
                    let delta = try StoredDelta.delta(existing)
                    let after = Delta.timestamp(after: delta.localTimestamp)
                    if after > write.localTimestamp {
                        var later = try Delta(.dictionary(encoded.decoded().fields), at: encoded.key.description)
                        later.localTimestamp = after
                        encoded = try EncodedRecord(StoredDelta.record(later, model: model))
                    }
                    // A version marked dirty by an earlier version of the library never reached the server.
                    if existing.record.fields[Self.legacyDirtyColumn] != .bool(true) { held = delta }
                }
                try await tx.put(encoded)
                let action: JournalAction = write.isDeleted ? .delete : held == nil ? .add : .modify
                // Without a pending entry, the version held is the server's. The entry names the record: its
                // fields without the sync columns are the neutral form (a deletion's fields are empty).
                try await tx.journal.recordLocalChange(
                    action, writtenAs: try encoded.decoded(), without: StoredDelta.columns, at: now,
                    basedOn: held.map { StoredDelta.serverVersion($0, model: model) })
            }
        }
    }

    /// Journals, once per store, the changes an earlier version of the library
    /// marked with the `isDirty` column, as changes of items the server may
    /// not have (so any server version of them is a conflict for the policy).
    func adoptLegacyDirtyRecords() async throws {
        let scoped = store.scoped(to: account)
        guard try await scoped.metadata(Self.legacyDirtyAdopted) != true else { return }
        for try await page in store.changePages(for: account, after: .start) {
            let dirty = page.records.filter { $0.record.fields[Self.legacyDirtyColumn] == .bool(true) }
            guard !dirty.isEmpty else { continue }
            try await store.transaction(for: account) { tx in
                for listed in dirty {
                    guard let model = StoredDelta.model(of: listed.record.collection),
                        let stored = try await tx.record(listed.record.key),
                        stored.record.fields[Self.legacyDirtyColumn] == .bool(true)
                    else { continue }
                    let delta = try StoredDelta.delta(stored)
                    let local = StoredDelta.neutral(delta, model: model)
                    try await tx.put(StoredDelta.record(delta, model: model))
                    try await tx.journal.recordLocalChange(
                        delta.isDeleted ? .delete : .add, local: local, at: local.version.modifiedAt, basedOn: nil)
                }
            }
        }
        try await scoped.setMetadata(true, Self.legacyDirtyAdopted)
    }

    /// The object `stored` holds; dirty when its change is journaled (`isJournaled`) or marked by an earlier version.
    private static func object(_ stored: StoredRecord, model: String, isDirty isJournaled: Bool) throws -> AquasyncObject {
        let delta = try StoredDelta.delta(stored)
        let isDirty = isJournaled || stored.record.fields[legacyDirtyColumn] == .bool(true)
        return AquasyncObject(
            model: model, gid: delta.gid, fields: delta.fields, isDeleted: delta.isDeleted, isDirty: isDirty,
            localTimestamp: delta.localTimestamp, deviceToken: delta.deviceToken)
    }
}
