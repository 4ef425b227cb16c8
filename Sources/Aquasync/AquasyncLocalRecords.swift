import FoundationEssentials
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
/// A write marks the record dirty and stamps `localTimestamp` with the clock,
/// at least one millisecond after the version it replaces, so a local edit
/// always supersedes what it edited.
public struct AquasyncLocalRecords: Sendable {
    /// The local store.
    public let store: any SyncStore
    /// The account the records live under in ``store``.
    public let account: AccountID
    /// The wall clock that stamps `localTimestamp`.
    public let clock: any WallClock

    /// The metadata peer for the device's own state: its token, `latestUST`, the push cursor.
    static let deviceState: PeerID = "aquasync.device"
    /// The local-only column marking a record whose change waits to be pushed.
    static let dirtyColumn = "isDirty"
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

    /// Creates or replaces a record's fields and marks it dirty.
    /// - Parameters:
    ///   - model: The model, such as `Contact`.
    ///   - gid: The record's id; a new lowercase UUID when `nil`.
    ///   - fields: The application's fields; names cannot be sync columns or start with `_`.
    /// - Returns: The record's gid.
    @discardableResult
    public func save(_ model: String, gid: String? = nil, fields: [String: SyncValue]) async throws -> String {
        guard DeltaPack.isValidModelName(model) else { throw AquasyncValidationError("\"\(model)\" is not a model name") }
        if let bad = fields.keys.first(where: { Delta.syncColumns.contains($0) || $0 == Self.dirtyColumn || $0.hasPrefix("_") }) {
            throw AquasyncValidationError("\"\(bad)\" is a sync column or starts with '_': choose another field name")
        }
        let gid = gid ?? UUID().uuidString.lowercased()
        guard isLowercaseUUID(gid) else { throw AquasyncValidationError("gid must be a lowercase UUID") }
        try await write(model, gid: gid, fields: fields, isDeleted: false)
        return gid
    }

    /// Soft-deletes a record and marks it dirty; its fields are cleared.
    public func delete(_ model: String, gid: String) async throws {
        try await write(model, gid: gid, fields: [:], isDeleted: true)
    }

    /// The record `gid` of `model`, deleted or not, or `nil` if this device never saw it.
    public func object(_ model: String, gid: String) async throws -> AquasyncObject? {
        try await store.transaction(for: account) { tx in
            try await tx.record(StoredDelta.key(model, gid)).map { try Self.object($0, model: model) }
        }
    }

    /// The records of `model` that are not deleted, in gid order.
    public func objects(_ model: String) async throws -> [AquasyncObject] {
        try await store.transaction(for: account) { tx in
            var objects: [AquasyncObject] = []
            for try await stored in tx.allRecords(in: StoredDelta.collection(for: model)) where !stored.record.isDeleted {
                objects.append(try Self.object(stored, model: model))
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

    private func write(_ model: String, gid: String, fields: [String: SyncValue], isDeleted: Bool) async throws {
        let token = try await deviceToken()
        let now = Delta.milliseconds(clock.now())
        try await store.transaction(for: account) { tx in
            let key = StoredDelta.key(model, gid)
            var timestamp = now
            if let existing = try await tx.record(key) {
                timestamp = max(now, try StoredDelta.delta(existing, droppingColumns: [Self.dirtyColumn]).localTimestamp + 1)
            }
            let delta = Delta(gid: gid, deviceToken: token, localTimestamp: timestamp, isDeleted: isDeleted, fields: fields)
            try await tx.put(StoredDelta.record(delta, model: model, extra: [Self.dirtyColumn: true]))
        }
    }

    private static func object(_ stored: StoredRecord, model: String) throws -> AquasyncObject {
        let delta = try StoredDelta.delta(stored, droppingColumns: [dirtyColumn])
        return AquasyncObject(
            model: model, gid: delta.gid, fields: delta.fields, isDeleted: delta.isDeleted,
            isDirty: stored.record.fields[dirtyColumn] == .bool(true), localTimestamp: delta.localTimestamp,
            deviceToken: delta.deviceToken)
    }
}
