import FoundationEssentials
public import SyncCore

/// An Aquasync device: keeps the application's records with their sync
/// columns in a local ``SyncStore`` and syncs them with an ``AquasyncServer``.
///
/// ```swift
/// let client = AquasyncClient(
///     store: try SQLiteStore(path: "device.sqlite"),
///     transport: HTTPClientTransport(baseURL: serverURL).with(CredentialsMiddleware(.basic(username: "ada", password: "…"))),
///     codec: JSONCodec(),
///     configuration: .init(packSize: 200))
/// let gid = try await client.save("Contact", fields: ["name": "Ada"])
/// try await client.sync()           // pull, then push
/// ```
///
/// The library, not the application, keeps the sync columns: `gid`,
/// `deviceToken`, `isDirty`, `localTimestamp`, `isDeleted`, and the device's
/// `latestUST`. What is not the store, the account, the transport or the
/// codec is in ``Configuration``: where the server is mounted, retries, the
/// clocks, the conflict policy and the pack size.
///
/// ## Rules it follows
/// - A local write marks the record dirty and stamps `localTimestamp` with the
///   clock, at least one millisecond after the version it replaces, so a local
///   edit always supersedes what it edited.
/// - ``pullSync()`` never marks a record dirty and never stamps a local time
///   (but for a merge, below). A clean record takes the server's version. A
///   pulled version of a dirty record is a conflict, which
///   ``Configuration/conflictPolicy`` decides, with the local edit as `local`
///   and the server's version as `remote` (flat deltas, see
///   ``AquasyncNewestWins``):
///   - `keepLocal`, `deferred` — the local edit stays dirty and is pushed;
///     the server's policy has the last word;
///   - `takeRemote` — the record takes the server's version and is clean,
///     since nothing of the local edit is left to push;
///   - `merged` — the merged fields become a local edit (dirty, stamped one
///     millisecond after the later of the two versions);
///   - `keepBoth` — the record takes the server's version, and the local
///     edit becomes a new record (a new gid, dirty).
///
///   The default, ``AquasyncNewestWins``, keeps the local edit only when its
///   `localTimestamp` is newer (ties to the greater `deviceToken`). Each page
///   of a pull is applied with its `latestUST` in one transaction.
/// - ``pushSync()`` sends every dirty record in packs with fresh `_id`s and
///   retries a pack unchanged on transient failures. A pushed record becomes
///   clean only if it was not edited while its pack was in flight.
/// - Syncs run one at a time; local writes may happen during a sync.
///
/// Requests go through a ``SyncCore/SyncEndpoint``: failures that may pass
/// are retried as ``Configuration/retry`` says, waiting on
/// ``Configuration/sleeper`` (a pushed pack keeps its `_id`, so the server
/// applies it once), and what is left is thrown as a ``SyncCore/SyncClientError``.
public actor AquasyncClient {
    /// Where the server is mounted, how requests are retried, the clocks, how
    /// conflicts are decided and how many deltas go in a pack. Every setting
    /// has a default: `AquasyncClient(store:transport:codec:)` syncs with a
    /// server mounted at `/deltas`, retries as ``SyncCore/RetryPolicy/default``,
    /// decides conflicts with ``AquasyncNewestWins`` and pushes 500 deltas a pack.
    ///
    /// ```swift
    /// var configuration = AquasyncClient.Configuration(conflictPolicy: .serverWins)
    /// configuration.retry = .none
    /// ```
    public struct Configuration: Sendable {
        /// Where the server is mounted (`/deltas` by default).
        public var basePath: String
        /// How requests that failed for a reason that may pass are retried.
        public var retry: RetryPolicy
        /// The wall clock that stamps `localTimestamp` of local changes.
        public var clock: any WallClock
        /// The clock the waits between retries are slept on: a test passes a `TestClock`.
        public var sleeper: any Clock<Duration>
        /// Decides a pulled version of a record with a local edit not yet
        /// pushed; the seed's rule, ``AquasyncNewestWins``, by default.
        public var conflictPolicy: any ConflictPolicy
        /// The most deltas one pushed pack carries (500 by default; at least 1).
        public var packSize: Int

        /// Makes a configuration; every setting left out keeps its default.
        /// - Parameters:
        ///   - basePath: Where the server is mounted.
        ///   - retry: How failures that may pass are retried.
        ///   - clock: The wall clock that stamps local changes.
        ///   - sleeper: The clock the waits between retries are slept on.
        ///   - conflictPolicy: Decides conflicts found while pulling.
        ///   - packSize: The most deltas in one pushed pack.
        public init(
            basePath: String = "/deltas", retry: RetryPolicy = .default, clock: any WallClock = SystemWallClock(),
            sleeper: any Clock<Duration> = ContinuousClock(), conflictPolicy: any ConflictPolicy = AquasyncNewestWins(),
            packSize: Int = 500
        ) {
            self.basePath = basePath
            self.retry = retry
            self.clock = clock
            self.sleeper = sleeper
            self.conflictPolicy = conflictPolicy
            self.packSize = packSize
        }
    }

    /// The local store.
    public nonisolated let store: any SyncStore
    /// The account the local records live under in ``store``.
    public nonisolated let account: AccountID
    /// How requests reach the server.
    public nonisolated let transport: any SyncClientTransport
    /// The codec DeltaPacks travel in.
    public nonisolated let codec: any SyncCodec
    /// Where the server is mounted, retries, clocks, the conflict policy and the pack size.
    public nonisolated let configuration: Configuration

    private nonisolated let endpoint: SyncEndpoint
    /// Lets one sync run at a time.
    package nonisolated let syncGate = SyncGate()
    private var cachedDeviceToken: String?

    static var deviceState: PeerID { AquasyncLocalRecords.deviceState }
    static var dirtyColumn: String { AquasyncLocalRecords.dirtyColumn }
    /// How far the change sequence has been looked through for dirty records.
    static let pushedThrough = MetadataKey<ChangePosition>("pushedThrough", peer: deviceState)

    /// Makes a client.
    /// - Parameters:
    ///   - store: The local store; the device's token and `latestUST` are kept in it too.
    ///   - account: The account local records live under in `store`.
    ///   - transport: How requests reach the server (add credentials with a middleware).
    ///   - codec: The codec DeltaPacks travel in.
    ///   - configuration: Where the server is mounted, retries, clocks, the conflict policy and the pack size.
    public init(
        store: any SyncStore, account: AccountID = "device", transport: any SyncClientTransport,
        codec: any SyncCodec, configuration: Configuration = Configuration()
    ) {
        self.store = store
        self.account = account
        self.transport = transport
        self.codec = codec
        var configuration = configuration
        configuration.packSize = max(1, configuration.packSize)
        self.configuration = configuration
        self.endpoint = SyncEndpoint(
            transport: transport, codecs: CodecSet([codec]), retry: configuration.retry, clock: configuration.sleeper)
    }

    // MARK: Local records

    /// The device's records, readable and writable without the network.
    public nonisolated var records: AquasyncLocalRecords {
        AquasyncLocalRecords(store: store, account: account, clock: configuration.clock)
    }

    /// This device's token: a lowercase UUID made on first use and kept in the store.
    public func deviceToken() async throws -> String {
        if let cachedDeviceToken { return cachedDeviceToken }
        let token = try await records.deviceToken()
        cachedDeviceToken = token
        return token
    }

    /// Creates or replaces a record's fields and marks it dirty; see ``AquasyncLocalRecords/save(_:gid:fields:)``.
    @discardableResult
    public func save(_ model: String, gid: String? = nil, fields: [String: SyncValue]) async throws -> String {
        try await records.save(model, gid: gid, fields: fields)
    }

    /// Soft-deletes a record and marks it dirty.
    public func delete(_ model: String, gid: String) async throws {
        try await records.delete(model, gid: gid)
    }

    /// The record `gid` of `model`, deleted or not, or `nil` if this device never saw it.
    public func object(_ model: String, gid: String) async throws -> AquasyncObject? {
        try await records.object(model, gid: gid)
    }

    /// The records of `model` that are not deleted, in gid order.
    public func objects(_ model: String) async throws -> [AquasyncObject] {
        try await records.objects(model)
    }

    /// The update sequence timestamp this device has pulled up to.
    public func latestUST() async throws -> Int64 {
        try await records.latestUST()
    }

    // MARK: Sync

    /// What one sync did.
    public struct Report: Sendable, Hashable {
        /// Server versions written locally.
        public var pulled: Int
        /// Local versions sent to the server.
        public var pushed: Int
    }

    /// Pulls, then pushes.
    /// - Throws: ``SyncCore/SyncClientError`` when the server cannot be reached or refuses,
    ///   ``SyncCore/StoreError`` when the local store fails.
    @discardableResult
    public func sync() async throws -> Report {
        try await syncGate.run {
            let pulled = try await runPull()
            let pushed = try await runPush()
            return Report(pulled: pulled, pushed: pushed)
        }
    }

    /// Brings the server's changes made by other devices since ``latestUST()``.
    /// - Returns: How many server versions were written locally.
    @discardableResult
    public func pullSync() async throws -> Int {
        try await syncGate.run { try await runPull() }
    }

    /// Sends every dirty record.
    /// - Returns: How many deltas were sent.
    @discardableResult
    public func pushSync() async throws -> Int {
        try await syncGate.run { try await runPush() }
    }

    private func runPull() async throws -> Int {
        let token = try await deviceToken()
        var applied = 0
        while true {
            let ust = try await latestUST()
            let request = endpoint.request(.get, "\(configuration.basePath)/from:\(ust)?deviceToken=\(token)")
            let response = try await endpoint.send(request)
            if response.status == 204 { return applied }
            let pack = try DeltaPack(try endpoint.decode(SyncValue.self, from: response, of: request), requireID: false)
            guard let latest = pack.latestUST else {
                throw SyncClientError(
                    .invalidResponse, status: response.status,
                    "\(request.method) \(request.pathWithoutQuery): the server's pack carries no latestUST")
            }
            let policy = configuration.conflictPolicy
            applied += try await store.transaction(for: account) { tx in
                var applied = 0
                for (model, deltas) in pack.models {
                    for delta in deltas where try await Self.apply(delta, model: model, policy: policy, in: tx) {
                        applied += 1
                    }
                }
                try await tx.setMetadata(latest, AquasyncLocalRecords.latestUSTKey)
                return applied
            }
            if !pack.hasMore { return applied }
        }
    }

    /// Writes a pulled delta, or, over a local dirty edit, what `policy`
    /// makes of the two; `true` when the server's version was written.
    private static func apply(
        _ delta: Delta, model: String, policy: any ConflictPolicy, in tx: any StoreTransaction
    ) async throws -> Bool {
        let clean: [String: SyncValue] = [dirtyColumn: false]
        guard let existing = try await tx.record(StoredDelta.key(model, delta.gid)),
            existing.record.fields[dirtyColumn] == .bool(true)
        else {
            try await tx.put(StoredDelta.record(delta, model: model, extra: clean))
            return true
        }
        let local = try StoredDelta.delta(existing, droppingColumns: [dirtyColumn])
        let conflict = Conflict(
            local: StoredDelta.record(local, model: model), remote: StoredDelta.record(delta, model: model),
            resolvingSide: .client)
        switch await policy.resolve(conflict) {
        case .keepLocal, .deferred:
            return false
        case .takeRemote:
            try await tx.put(StoredDelta.record(delta, model: model, extra: clean))
        case .merged(let merged):
            let version = Delta(merged: merged, gid: local.gid, deviceToken: local.deviceToken, after: local, delta)
            try await tx.put(StoredDelta.record(version, model: model, extra: [dirtyColumn: true]))
        case .keepBoth:
            try await tx.put(StoredDelta.record(delta, model: model, extra: clean))
            let copy = local.copied(as: UUID().uuidString.lowercased(), deviceToken: local.deviceToken)
            try await tx.put(StoredDelta.record(copy, model: model, extra: [dirtyColumn: true]))
        }
        return true
    }

    private func runPush() async throws -> Int {
        let cursor = try await store.scoped(to: account).metadata(Self.pushedThrough) ?? .start
        var dirty: [(model: String, stored: StoredRecord)] = []
        var position = cursor
        for try await batch in store.changePages(for: account, after: cursor) {
            for stored in batch.records where stored.record.fields[Self.dirtyColumn] == .bool(true) {
                if let model = StoredDelta.model(of: stored.record.collection) { dirty.append((model, stored)) }
            }
            position = batch.lastPosition
        }
        var pushed = 0
        var start = 0
        while start < dirty.count {
            let chunk = dirty[start..<min(start + configuration.packSize, dirty.count)]
            var pack = DeltaPack(id: UUID().uuidString.lowercased())
            for (model, stored) in chunk {
                pack.models[model, default: []].append(
                    try StoredDelta.delta(stored, droppingColumns: [Self.dirtyColumn]).withoutUST)
            }
            let request = SyncRequest(
                method: .post, path: configuration.basePath, contentType: codec.primaryMediaType, accept: codec.primaryMediaType,
                body: try codec.encode(pack.value(for: codec.features)))
            _ = try await endpoint.send(request, idempotent: true, as: SyncValue.self)
            try await store.transaction(for: account) { tx in
                for (_, stored) in chunk {
                    guard let current = try await tx.record(stored.record.key), current.position == stored.position else {
                        continue
                    }
                    var clean = current.record
                    clean.fields[Self.dirtyColumn] = false
                    try await tx.put(clean)
                }
            }
            pushed += chunk.count
            start += chunk.count
        }
        let reached = position
        if reached > cursor {
            try await store.scoped(to: account).setMetadata(reached, Self.pushedThrough)
        }
        return pushed
    }
}

extension Delta {
    /// The delta without the server's `ust`, as a device sends it.
    var withoutUST: Delta {
        var copy = self
        copy.ust = nil
        return copy
    }
}

/// The error an Aquasync client throws when a request fails: the name it had
/// before every stack's client shared ``SyncCore/SyncClientError``.
public typealias AquasyncClientError = SyncClientError
