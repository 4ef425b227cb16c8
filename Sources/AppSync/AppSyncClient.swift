import FoundationEssentials
public import SyncCore

/// An appSync device: keeps objects with its own counter in a local
/// ``SyncStore``, and syncs each type with ``sync()`` — download, then upload.
///
/// ```swift
/// let client = AppSyncClient(
///     store: localStore, transport: transport, codec: JSONCodec(),
///     types: [AppSyncObjectType("booking", primaryKey: ["room", "date"])],
///     configuration: .init(conflictPolicy: .serverWins))
/// let guid = try await client.save("booking", fields: ["room": 100, "date": "2015-05-12", "price": 90])
/// try await client.sync()
/// ```
///
/// What is not the local store, the server or the types is in ``Configuration``:
/// where the server is mounted, retries, the clocks and the conflict policy.
///
/// ## Counters
/// The client's counter grows with every local change — never when it
/// applies the server's changes. Each object keeps the counter value of its
/// last local change (`counter_lastupdate`); per type the client keeps
/// `counter_lastsync` (its counter at the last upload) and
/// `servercounter_lastsync` (the server counter its downloads reached). An
/// object is *dirty* when its `counter_lastupdate` is above `counter_lastsync`.
///
/// ## Conflicts
/// Downloading an object whose local copy is dirty is a conflict, and so is
/// downloading a live object whose primary key a different local object
/// holds. Both are handed to the configuration's
/// ``Configuration/conflictPolicy`` with the server's version as `remote`;
/// the policy's answer is applied:
/// - `keepLocal` — the local version stays dirty and goes up next;
/// - `takeRemote` — the server's version replaces it (and, for a primary-key
///   clash, the local object is soft-deleted);
/// - `merged` — the merged fields become a local change under the server's guid;
/// - `keepBoth`, `deferred` — for the same guid, the local version is kept
///   for the application to settle; a primary key cannot be held twice, so for
///   a primary-key clash they act as `takeRemote`.
///
/// ## Not skipping, not echoing
/// After an upload the client moves `servercounter_lastsync` to the answer's
/// `servercounter` only when the answer's `servercounter_before` equals it —
/// nothing else happened on the server in between. Otherwise it keeps it; the
/// next download brings the other changes, and its own objects come back once
/// and are recognised as unchanged.
///
/// ## Sending
/// Requests go through a ``SyncCore/SyncEndpoint``: a failure that may pass
/// (no answer, 429, 5xx) is retried as ``Configuration/retry`` says, waiting
/// on the ``Configuration/sleeper`` clock; what is left is thrown as a
/// ``SyncCore/SyncClientError``. An update may be sent twice without harm —
/// the server skips an object identical to the one it has — so it is retried
/// like a list.
///
/// Syncs run one at a time (``sync()`` and ``fullSync()`` called together
/// run one after the other); local writes may happen during a sync.
public actor AppSyncClient {
    /// How a client reaches the server, retries, stamps local changes and
    /// settles conflicts. Every setting has a default:
    /// `AppSyncClient(store:transport:codec:types:)` syncs with a server
    /// mounted at `/rest`, retries as ``SyncCore/RetryPolicy/default``, and
    /// keeps the newer version of a conflict (``SyncCore/NewestWinsPolicy``).
    ///
    /// ```swift
    /// var configuration = AppSyncClient.Configuration(conflictPolicy: .clientWins)
    /// configuration.retry = .none
    /// ```
    public struct Configuration: Sendable {
        /// Where the server is mounted (`/rest` by default).
        public var basePath: String
        /// How requests that failed for a reason that may pass are retried.
        public var retry: RetryPolicy
        /// The wall clock that stamps `timestamp_created` and `timestamp_lastupdate` of local changes.
        public var clock: any WallClock
        /// The clock the waits between retries are slept on: a test passes a `TestClock`.
        public var sleeper: any Clock<Duration>
        /// Decides conflicts found while downloading. The seed leaves the
        /// choice to the application (server, client or timestamp priority);
        /// the default is timestamp priority, ``SyncCore/NewestWinsPolicy``,
        /// as `anchorage sync --stack appsync` uses without `--priority`.
        public var conflictPolicy: any ConflictPolicy

        /// Makes a configuration; every setting left out keeps its default.
        /// - Parameters:
        ///   - basePath: Where the server is mounted.
        ///   - retry: How failures that may pass are retried.
        ///   - clock: The wall clock that stamps local changes.
        ///   - sleeper: The clock the waits between retries are slept on.
        ///   - conflictPolicy: Decides conflicts.
        public init(
            basePath: String = "/rest", retry: RetryPolicy = .default, clock: any WallClock = SystemWallClock(),
            sleeper: any Clock<Duration> = ContinuousClock(), conflictPolicy: any ConflictPolicy = NewestWinsPolicy()
        ) {
            self.basePath = basePath
            self.retry = retry
            self.clock = clock
            self.sleeper = sleeper
            self.conflictPolicy = conflictPolicy
        }
    }

    /// The local store.
    public nonisolated let store: any SyncStore
    /// The account local objects live under in ``store``.
    public nonisolated let account: AccountID
    /// How requests reach the server.
    public nonisolated let transport: any SyncClientTransport
    /// The codec objects travel in.
    public nonisolated let codec: any SyncCodec
    /// The types this client syncs, by name.
    public nonisolated let types: [String: AppSyncObjectType]
    /// Where the server is mounted, retries, clocks and the conflict policy.
    public nonisolated let configuration: Configuration
    private nonisolated let endpoint: SyncEndpoint
    /// Lets one sync run at a time.
    package nonisolated let syncGate = SyncGate()

    /// Makes a client.
    /// - Parameters:
    ///   - store: The local store; the counters are kept in it too.
    ///   - account: The account local objects live under in `store`.
    ///   - transport: How requests reach the server (add credentials with a middleware).
    ///   - codec: The codec objects travel in.
    ///   - types: The types this client syncs.
    ///   - configuration: Where the server is mounted, retries, clocks and the conflict policy.
    public init(
        store: any SyncStore, account: AccountID = "device", transport: any SyncClientTransport, codec: any SyncCodec,
        types: [AppSyncObjectType], configuration: Configuration = Configuration()
    ) {
        self.store = store
        self.account = account
        self.transport = transport
        self.codec = codec
        self.types = Dictionary(types.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        self.configuration = configuration
        self.endpoint = SyncEndpoint(
            transport: transport, codecs: CodecSet([codec]), retry: configuration.retry, clock: configuration.sleeper)
    }

    // MARK: Local objects

    /// Creates or updates an object as a local change.
    /// - Returns: The object's guid (a new UUID when `guid` is `nil`).
    /// - Throws: ``AppSyncError`` (409) when another live local object holds the same primary key.
    @discardableResult
    public func save(_ typeName: String, guid: String? = nil, fields: [String: SyncValue]) async throws -> String {
        let type = try self.type(typeName)
        if let reserved = fields.keys.first(where: { AppSyncObject.protocolFields.contains($0) }) {
            throw AppSyncError.invalid("\(reserved) is a protocol field")
        }
        let guid = guid ?? UUID().uuidString
        let now = wholeSeconds(configuration.clock.now())
        try await store.transaction(for: account) { tx in
            let existing = try await tx.record(StoredObject.key(typeName, guid)).map { try StoredObject.object($0.record).object }
            let object = AppSyncObject(
                guid: guid, fields: fields, timestampCreated: existing?.timestampCreated ?? now, timestampLastUpdate: now)
            if let primaryKey = type.primaryKeyValue(of: object),
                let owner = try await StoredObject.owner(of: primaryKey, type: typeName, in: tx), owner != guid
            {
                throw AppSyncError(status: 409, message: "object \(owner) already has this primary key")
            }
            try await StoredObject.put(
                object, replacing: existing, type: type, counter: try await Self.nextCounter(tx), in: tx)
        }
        return guid
    }

    /// Soft-deletes an object (`isdeleted` = 1) as a local change.
    public func delete(_ typeName: String, guid: String) async throws {
        let type = try self.type(typeName)
        let now = wholeSeconds(configuration.clock.now())
        try await store.transaction(for: account) { tx in
            guard let stored = try await tx.record(StoredObject.key(typeName, guid)) else {
                throw AppSyncError(status: 404, message: "no \(typeName) \(guid)")
            }
            let existing = try StoredObject.object(stored.record).object
            var deleted = existing
            deleted.isDeleted = true
            deleted.timestampLastUpdate = now
            try await StoredObject.put(
                deleted, replacing: existing, type: type, counter: try await Self.nextCounter(tx), in: tx)
        }
    }

    /// The object `guid`, deleted or not.
    public func object(_ typeName: String, guid: String) async throws -> AppSyncObject? {
        try await store.transaction(for: account) { tx in
            try await tx.record(StoredObject.key(typeName, guid)).map { try StoredObject.object($0.record).object }
        }
    }

    /// The live objects of a type, in guid order.
    public func objects(_ typeName: String) async throws -> [AppSyncObject] {
        try await allStored(typeName).map(\.object).filter { !$0.isDeleted }
    }

    /// The client's counter, and per type its `counter_lastsync` and `servercounter_lastsync`.
    public func counters(_ typeName: String) async throws -> (counter: Int64, counterLastSync: Int64, serverCounterLastSync: Int64) {
        try await store.transaction(for: account) { tx in
            (
                try await tx.metadata(ClientState.counter) ?? 0,
                try await tx.metadata(ClientState.counterLastSync(typeName)) ?? 0,
                try await tx.metadata(ClientState.serverCounterLastSync(typeName)) ?? 0
            )
        }
    }

    // MARK: Sync

    /// What one sync did.
    public struct Report: Sendable, Hashable {
        /// Server versions written locally.
        public var downloaded = 0
        /// Objects sent to the server.
        public var uploaded = 0
        /// Conflicts handed to the policy (same guid or same primary key).
        public var conflicts = 0
        /// Objects the server refused, with its reasons; they stay dirty.
        public var rejected: [String: String] = [:]

        /// An empty report.
        public init() {}
    }

    /// Downloads, then uploads, every type (the seed's `doSync()`); waits first for a sync already running.
    /// - Throws: ``SyncCore/SyncClientError`` when the server cannot be reached or
    ///   refuses, ``SyncCore/StoreError`` when the local store fails.
    @discardableResult
    public func sync() async throws -> Report {
        try await syncGate.run { try await runSync() }
    }

    /// Forgets both sync counters, then syncs: everything is downloaded and every local object uploaded.
    /// - Throws: as ``sync()``.
    @discardableResult
    public func fullSync() async throws -> Report {
        try await syncGate.run {
            try await store.transaction(for: account) { tx in
                for name in self.types.keys {
                    try await tx.setMetadata(nil, ClientState.counterLastSync(name))
                    try await tx.setMetadata(nil, ClientState.serverCounterLastSync(name))
                }
            }
            return try await runSync()
        }
    }

    private func runSync() async throws -> Report {
        var report = Report()
        for name in types.keys.sorted() {
            try await syncFromServer(name, into: &report)
            try await syncToServer(name, into: &report)
        }
        return report
    }

    private func syncFromServer(_ name: String, into report: inout Report) async throws {
        let type = try self.type(name)
        while true {
            let from = try await counters(name).serverCounterLastSync
            let answer = try await endpoint.send(
                endpoint.request(.get, "\(configuration.basePath)/\(name)/list/\(from)"), as: AppSyncMessages.ListAnswer.self)
            let remote = answer.objects
            let serverCounter = answer.result.servercounter
            let (downloaded, conflicts) = try await store.transaction(for: account) { tx in
                var downloaded = 0
                var conflicts = 0
                let lastSync = try await tx.metadata(ClientState.counterLastSync(name)) ?? 0
                for object in remote {
                    switch try await self.applyDownloaded(object, type: type, counterLastSync: lastSync, in: tx) {
                    case .unchanged: break
                    case .written: downloaded += 1
                    case .conflict(let wrote):
                        conflicts += 1
                        if wrote { downloaded += 1 }
                    }
                }
                try await tx.setMetadata(serverCounter, ClientState.serverCounterLastSync(name))
                return (downloaded, conflicts)
            }
            report.downloaded += downloaded
            report.conflicts += conflicts
            if answer.result.more != true { return }
        }
    }

    private enum Applied { case unchanged, written, conflict(wrote: Bool) }

    private func applyDownloaded(
        _ remote: AppSyncObject, type: AppSyncObjectType, counterLastSync: Int64, in tx: any StoreTransaction
    ) async throws -> Applied {
        let key = StoredObject.key(type.name, remote.guid)
        if let stored = try await tx.record(key) {
            let (local, counter) = try StoredObject.object(stored.record)
            if local == remote { return .unchanged }
            guard counter > counterLastSync else {
                try await StoredObject.put(remote, replacing: local, type: type, counter: counter, in: tx)
                return .written
            }
            let resolution = await configuration.conflictPolicy.resolve(
                Conflict(local: Self.record(local, type, node: "client"), remote: Self.record(remote, type, node: "server"),
                    resolvingSide: .client))
            switch resolution {
            case .keepLocal, .keepBoth, .deferred:
                return .conflict(wrote: false)
            case .takeRemote:
                try await StoredObject.put(remote, replacing: local, type: type, counter: 0, in: tx)
            case .merged(let merged):
                var object = remote
                object.fields = merged.fields.filter { !AppSyncObject.protocolFields.contains($0.key) }
                object.isDeleted = merged.isDeleted
                object.timestampLastUpdate = max(local.timestampLastUpdate, remote.timestampLastUpdate)
                try await StoredObject.put(object, replacing: local, type: type, counter: try await Self.nextCounter(tx), in: tx)
            }
            return .conflict(wrote: true)
        }
        if !remote.isDeleted, let primaryKey = type.primaryKeyValue(of: remote),
            let owner = try await StoredObject.owner(of: primaryKey, type: type.name, in: tx),
            let ownerStored = try await tx.record(StoredObject.key(type.name, owner))
        {
            let (local, _) = try StoredObject.object(ownerStored.record)
            let resolution = await configuration.conflictPolicy.resolve(
                Conflict(local: Self.record(local, type, node: "client"), remote: Self.record(remote, type, node: "server"),
                    resolvingSide: .client))
            var retired = local
            retired.isDeleted = true
            retired.timestampLastUpdate = max(local.timestampLastUpdate, wholeSeconds(configuration.clock.now()))
            try await StoredObject.put(retired, replacing: local, type: type, counter: try await Self.nextCounter(tx), in: tx)
            switch resolution {
            case .takeRemote, .keepBoth, .deferred:
                try await StoredObject.put(remote, replacing: nil, type: type, counter: 0, in: tx)
            case .keepLocal, .merged:
                var object = remote
                if case .merged(let merged) = resolution {
                    object.fields = merged.fields.filter { !AppSyncObject.protocolFields.contains($0.key) }
                } else {
                    object.fields = local.fields
                }
                object.timestampLastUpdate = max(local.timestampLastUpdate, remote.timestampLastUpdate)
                try await StoredObject.put(object, replacing: nil, type: type, counter: try await Self.nextCounter(tx), in: tx)
            }
            return .conflict(wrote: true)
        }
        try await StoredObject.put(remote, replacing: nil, type: type, counter: 0, in: tx)
        return .written
    }

    private func syncToServer(_ name: String, into report: inout Report) async throws {
        let (counterNow, lastSync, serverLastSync) = try await counters(name)
        let dirty = try await allStored(name).filter { $0.counter > lastSync }
        guard !dirty.isEmpty else { return }
        let request = try endpoint.request(
            .post, "\(configuration.basePath)/\(name)/update", body: AppSyncMessages.UpdateRequest(objects: dirty.map(\.object)))
        let result = try await endpoint.send(request, idempotent: true, as: AppSyncMessages.UpdateAnswer.self).result
        let serverCounter = result.servercounter
        var rejected: [String: String] = [:]
        for entry in result.rejected ?? [] { rejected[entry.guid] = entry.reason ?? "refused" }
        let before = result.servercounterBefore
        let type = try self.type(name)
        let stillDirty = rejected
        try await store.transaction(for: account) { tx in
            for guid in stillDirty.keys.sorted() {
                guard let stored = try await tx.record(StoredObject.key(name, guid)) else { continue }
                let (object, counter) = try StoredObject.object(stored.record)
                if counter <= counterNow {
                    try await StoredObject.put(object, replacing: object, type: type, counter: try await Self.nextCounter(tx), in: tx)
                }
            }
            try await tx.setMetadata(counterNow, ClientState.counterLastSync(name))
            if before == serverLastSync {
                try await tx.setMetadata(serverCounter, ClientState.serverCounterLastSync(name))
            }
        }
        report.uploaded += dirty.count - rejected.count
        report.rejected.merge(rejected) { _, new in new }
    }

    // MARK: Helpers

    private func type(_ name: String) throws -> AppSyncObjectType {
        guard let type = types[name] else { throw AppSyncError(status: 404, message: "'\(name)' is not a type this client syncs") }
        return type
    }

    private func allStored(_ name: String) async throws -> [(object: AppSyncObject, counter: Int64)] {
        try await store.transaction(for: account) { tx in
            var all: [(AppSyncObject, Int64)] = []
            for try await stored in tx.allRecords(in: StoredObject.collection(name)) {
                all.append(try StoredObject.object(stored.record))
            }
            return all
        }
    }

    private static func nextCounter(_ tx: any StoreTransaction) async throws -> Int64 {
        let next = (try await tx.metadata(ClientState.counter) ?? 0) + 1
        try await tx.setMetadata(next, ClientState.counter)
        return next
    }

    private static func record(_ object: AppSyncObject, _ type: AppSyncObjectType, node: PeerID) -> SyncRecord {
        SyncRecord(
            collection: StoredObject.collection(type.name), id: RecordID(object.guid), fields: object.fields,
            isDeleted: object.isDeleted, version: RecordVersion(modifiedAt: object.timestampLastUpdate, node: node))
    }

    private func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}

/// Where a client keeps its counters: the metadata of the peer `appsync.client`.
enum ClientState {
    static let peer: PeerID = "appsync.client"
    /// The client's counter: grows with every local change.
    static let counter = MetadataKey<Int64>("counter", peer: peer)

    /// The client's counter at its last upload of `type`.
    static func counterLastSync(_ type: String) -> MetadataKey<Int64> {
        MetadataKey("counter_lastsync/" + type, peer: peer)
    }

    /// The server counter the downloads of `type` reached.
    static func serverCounterLastSync(_ type: String) -> MetadataKey<Int64> {
        MetadataKey("servercounter_lastsync/" + type, peer: peer)
    }
}
