import FoundationEssentials
public import SyncCore

/// An Aquasync device: keeps the application's records with their sync
/// columns in a local ``SyncStore`` and syncs them with an ``AquasyncServer``.
///
/// ```swift
/// let client = AquasyncClient(
///     store: try SQLiteStore(path: "device.sqlite"),
///     transport: HTTPClientTransport(baseURL: serverURL).with(CredentialsMiddleware(.basic(username: "ada", password: "…"))),
///     codec: JSONCodec())
/// let gid = try await client.save("Contact", fields: ["name": "Ada"])
/// try await client.sync()           // pull, then push
/// ```
///
/// The library, not the application, keeps the sync columns: `gid`,
/// `deviceToken`, `isDirty`, `localTimestamp`, `isDeleted`, and the device's
/// `latestUST`.
///
/// ## Rules it follows
/// - A local write marks the record dirty and stamps `localTimestamp` with the
///   clock, at least one millisecond after the version it replaces, so a local
///   edit always supersedes what it edited.
/// - ``pullSync()`` never marks a record dirty and never stamps a local time. A
///   clean record takes the server's version. A dirty record keeps the local
///   edit unless the server's version supersedes it (newer `localTimestamp`,
///   ties to the greater `deviceToken`); then it takes the server's version
///   and is clean, since nothing of the local edit is left to push. Each page
///   of a pull is applied with its `latestUST` in one transaction.
/// - ``pushSync()`` sends every dirty record in packs with fresh `_id`s and
///   retries a pack unchanged on transient failures. A pushed record becomes
///   clean only if it was not edited while its pack was in flight.
/// - Syncs run one at a time; local writes may happen during a sync.
public actor AquasyncClient {
    /// The local store.
    public nonisolated let store: any SyncStore
    /// The account the local records live under in ``store``.
    public nonisolated let account: AccountID
    /// How requests reach the server.
    public nonisolated let transport: any SyncClientTransport
    /// The codec DeltaPacks travel in.
    public nonisolated let codec: any SyncCodec
    /// The path the server is mounted at, such as `/deltas`.
    public nonisolated let basePath: String
    /// How failed requests are retried.
    public nonisolated let retry: RetryPolicy
    /// The most deltas one pushed pack carries.
    public nonisolated let packSize: Int

    private nonisolated let wallClock: any WallClock
    private let sleeper: any Clock<Duration>
    private var tail: Task<Void, Never>?
    private var cachedDeviceToken: String?

    static var deviceState: PeerID { AquasyncLocalRecords.deviceState }
    static var dirtyColumn: String { AquasyncLocalRecords.dirtyColumn }

    /// Makes a client.
    /// - Parameters:
    ///   - store: The local store; the device's token and `latestUST` are kept in it too.
    ///   - account: The account local records live under in `store`.
    ///   - transport: How requests reach the server (add credentials with a middleware).
    ///   - codec: The codec DeltaPacks travel in.
    ///   - basePath: Where the server is mounted.
    ///   - retry: How transient failures are retried.
    ///   - packSize: The most deltas in one pushed pack.
    ///   - clock: The wall clock that stamps `localTimestamp`.
    ///   - sleeper: The clock retries wait on.
    public init(
        store: any SyncStore, account: AccountID = "device", transport: any SyncClientTransport,
        codec: any SyncCodec, basePath: String = "/deltas", retry: RetryPolicy = .default, packSize: Int = 500,
        clock: any WallClock = SystemWallClock(), sleeper: any Clock<Duration> = ContinuousClock()
    ) {
        self.store = store
        self.account = account
        self.transport = transport
        self.codec = codec
        self.basePath = basePath
        self.retry = retry
        self.packSize = max(1, packSize)
        self.wallClock = clock
        self.sleeper = sleeper
    }

    // MARK: Local records

    /// The device's records, readable and writable without the network.
    public nonisolated var records: AquasyncLocalRecords {
        AquasyncLocalRecords(store: store, account: account, clock: wallClock)
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
    @discardableResult
    public func sync() async throws -> Report {
        try await exclusively { client in
            let pulled = try await client.runPull()
            let pushed = try await client.runPush()
            return Report(pulled: pulled, pushed: pushed)
        }
    }

    /// Brings the server's changes made by other devices since ``latestUST()``.
    /// - Returns: How many server versions were written locally.
    @discardableResult
    public func pullSync() async throws -> Int {
        try await exclusively { try await $0.runPull() }
    }

    /// Sends every dirty record.
    /// - Returns: How many deltas were sent.
    @discardableResult
    public func pushSync() async throws -> Int {
        try await exclusively { try await $0.runPush() }
    }

    private func exclusively<Result: Sendable>(
        _ operation: @escaping @Sendable (isolated AquasyncClient) async throws -> Result
    ) async throws -> Result {
        let previous = tail
        let task = Task { () async throws -> Result in
            await previous?.value
            return try await operation(self)
        }
        tail = Task { _ = await task.result }
        return try await task.value
    }

    private func runPull() async throws -> Int {
        let token = try await deviceToken()
        var applied = 0
        while true {
            let ust = try await latestUST()
            let request = SyncRequest(
                method: .get, path: "\(basePath)/from:\(ust)?deviceToken=\(token)", accept: codec.primaryMediaType)
            let response = try await send(request)
            if response.status == 204 { return applied }
            let pack = try DeltaPack(try decode(response), requireID: false)
            guard let latest = pack.latestUST else {
                throw AquasyncClientError(status: response.status, message: "the server's pack carries no latestUST")
            }
            applied += try await store.transaction(for: account) { tx in
                var applied = 0
                for (model, deltas) in pack.models {
                    for delta in deltas where try await Self.apply(delta, model: model, in: tx) { applied += 1 }
                }
                try await tx.setMetadata(.integer(latest), "latestUST", for: Self.deviceState)
                return applied
            }
            if !pack.hasMore { return applied }
        }
    }

    /// Writes a pulled delta unless a local dirty edit supersedes it; `true` when written.
    private static func apply(_ delta: Delta, model: String, in tx: any StoreTransaction) async throws -> Bool {
        let key = StoredDelta.key(model, delta.gid)
        if let existing = try await tx.record(key), existing.record.fields[dirtyColumn] == .bool(true) {
            let local = try StoredDelta.delta(existing, droppingColumns: [dirtyColumn])
            guard delta.supersedes(local) else { return false }
        }
        try await tx.put(StoredDelta.record(delta, model: model, extra: [dirtyColumn: false]))
        return true
    }

    private func runPush() async throws -> Int {
        let cursorKey = "pushedThrough"
        let cursor = try await store.transaction(for: account) { tx in
            ChangePosition(UInt64(try await tx.metadata(cursorKey, for: Self.deviceState)?.integerValue ?? 0))
        }
        var dirty: [(model: String, stored: StoredRecord)] = []
        var position = cursor
        while true {
            let batch = try await store.changes(for: account, after: position, in: nil, limit: 1_000)
            for stored in batch.records where stored.record.fields[Self.dirtyColumn] == .bool(true) {
                if let model = StoredDelta.model(of: stored.record.collection) { dirty.append((model, stored)) }
            }
            position = batch.lastPosition
            if !batch.hasMore { break }
        }
        var pushed = 0
        var start = 0
        while start < dirty.count {
            let chunk = dirty[start..<min(start + packSize, dirty.count)]
            var pack = DeltaPack(id: UUID().uuidString.lowercased())
            for (model, stored) in chunk {
                pack.models[model, default: []].append(
                    try StoredDelta.delta(stored, droppingColumns: [Self.dirtyColumn]).withoutUST)
            }
            let request = SyncRequest(
                method: .post, path: basePath, contentType: codec.primaryMediaType, accept: codec.primaryMediaType,
                body: try codec.encode(pack.value(for: codec.features)))
            _ = try decode(try await send(request))
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
            try await store.transaction(for: account) { tx in
                try await tx.setMetadata(.integer(Int64(clamping: reached.rawValue)), cursorKey, for: Self.deviceState)
            }
        }
        return pushed
    }

    // MARK: Requests

    /// Sends `request`, retrying transient failures as ``retry`` says.
    private func send(_ request: SyncRequest) async throws -> SyncResponse {
        var attempt = 1
        while true {
            do {
                let response = try await transport.send(request)
                if RetryPolicy.isTransient(status: response.status, idempotent: true), attempt < retry.maxAttempts {
                    try await sleeper.sleep(for: retry.delay(beforeRetry: attempt))
                    attempt += 1
                    continue
                }
                guard response.isSuccess else { throw AquasyncClientError(response) }
                return response
            } catch is TransportError where attempt < retry.maxAttempts {
                try await sleeper.sleep(for: retry.delay(beforeRetry: attempt))
                attempt += 1
            }
        }
    }

    private func decode(_ response: SyncResponse) throws -> SyncValue {
        let answerCodec = response.contentType.flatMap { type in codec.accepts(mediaType: type) ? codec : nil } ?? codec
        return try answerCodec.decode(response.body)
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

/// An answer from the server that is not a success, after any retries.
public struct AquasyncClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status.
    public var status: Int
    /// What the server said, or what was wrong with its answer.
    public var message: String

    /// Makes an error.
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    init(_ response: SyncResponse) {
        self.init(status: response.status, message: String(decoding: response.body.prefix(2_000), as: UTF8.self))
    }

    /// The status and the message.
    public var description: String { "server answered \(status): \(message)" }
}
