#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SyncCore

/// An appSync device: keeps objects in a local ``SyncStore``, each local
/// change in the store's journal, and syncs each type with ``sync()`` —
/// download, then upload.
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
/// where the server is mounted, retries, the clocks, the conflict policy and the update size.
///
/// ## The journal
/// ``save(_:guid:fields:)`` and ``delete(_:guid:)`` store the object and a
/// ``SyncCore/JournalEntry`` in one transaction: the action, its time, and
/// the ArchCopy — the object as the device last had it from the server. An
/// upload sends the objects whose entries are ready, in updates of
/// ``Configuration/updateSize`` objects, and an entry leaves the journal when
/// the server took the object (one changed again meanwhile
/// stays, to be sent again). Per type the client keeps
/// `servercounter_lastsync`, where its downloads reached; the seed's
/// `counter` and `counter_lastsync` are kept as a read-out (``counters(_:)``)
/// and no longer decide what is sent.
///
/// ## Conflicts
/// A downloaded object with a pending change is a conflict exactly when the
/// server's version holds something else than both the ArchCopy and the
/// local version (``SyncCore/JournalEntry/classify(_:)``); clocks play no
/// part. When it holds the local version, nothing is left to send. The
/// configuration's ``Configuration/conflictPolicy`` gets base, local and
/// remote and its answer is carried out:
/// - `keepLocal` — the local version goes up, stamped at least a second after
///   the server's version;
/// - `takeRemote` — the server's version replaces it;
/// - `merged` — the merged fields go up as a change of the server's version;
/// - `keepBoth` — the server's version under the guid, the local one as a new
///   object (not when both hold one primary key: the conflict stays open);
/// - `deferred` (``SyncCore/AskUserPolicy``) — the conflict stays open, the
///   local version is kept and not sent, until the application answers with
///   ``SyncCore/SyncStore/answerConflict(_:with:for:)``; the next sync
///   carries the answer out.
///
/// A downloaded live object whose primary key a different local object holds
/// is settled at once: one object under the server's guid is left (with the
/// server's fields for `takeRemote`, `keepBoth` and `deferred`, the local or
/// merged ones otherwise) and the local object is soft-deleted.
///
/// ## Refusals
/// An object the server rejects for its primary key (status 409) stays in
/// the journal, and the next download settles the clash; one it refuses for
/// good (status 422) leaves the journal and is listed in ``Report/refused``.
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
    public struct Configuration: StackClientConfiguration {
        /// The settings every client shares: base path (`/rest` by default), retries, clocks (the wall
        /// clock stamps `timestamp_created` and `timestamp_lastupdate` of local changes) and the conflict
        /// policy. The seed leaves the choice of policy to the application (server, client or timestamp
        /// priority); the default is timestamp priority, ``SyncCore/NewestWinsPolicy``, as `anchorage sync
        /// --stack appsync` uses without `--priority`; `.askUser` leaves every conflict to the application.
        /// They read and write by name: `configuration.retry = .none`.
        public var client: SyncClientConfiguration
        /// The most objects one update carries (500 by default; ``AppSyncServer`` takes up to
        /// ``AppSyncServer/maxObjectsPerUpdate``, 10,000 by default): more pending changes go up in
        /// several updates, each settled in the journal as its answer comes.
        public var updateSize: Int

        /// Makes a configuration; every setting left out keeps its default.
        /// - Parameters:
        ///   - basePath: Where the server is mounted.
        ///   - retry: How failures that may pass are retried.
        ///   - clock: The wall clock that stamps local changes.
        ///   - sleeper: The clock the waits between retries are slept on.
        ///   - conflictPolicy: Decides conflicts.
        ///   - updateSize: The most objects one update carries (at least 1).
        public init(
            basePath: String = "/rest", retry: RetryPolicy = .default, clock: any WallClock = SystemWallClock(),
            sleeper: any Clock<Duration> = ContinuousClock(), conflictPolicy: any ConflictPolicy = NewestWinsPolicy(),
            updateSize: Int = 500
        ) {
            self.client = SyncClientConfiguration(
                basePath: basePath, retry: retry, clock: clock, sleeper: sleeper, conflictPolicy: conflictPolicy)
            self.updateSize = updateSize
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
    /// Sends the requests, retrying what may pass.
    nonisolated let endpoint: SyncEndpoint
    /// The objects in the local store and their journal: what ``save(_:guid:fields:)`` and the reads go through.
    nonisolated let device: AppSyncDeviceObjects
    /// Lets one sync run at a time.
    package nonisolated let syncGate = SyncGate()

    /// Makes a client.
    /// - Parameters:
    ///   - store: The local store; the journal and the counters are kept in it too.
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
        var configuration = configuration
        configuration.updateSize = max(1, configuration.updateSize)
        self.configuration = configuration
        self.endpoint = SyncEndpoint(transport: transport, codec: codec, configuration: configuration.client)
        self.device = AppSyncDeviceObjects(store: store, account: account, types: self.types, clock: configuration.clock)
    }

    // A facade over its parts, each with one job: the local objects and their journal
    // (AppSyncDeviceObjects), one sync of every type (AppSyncClientSession) made of the
    // download (AppSyncClientPull) and the upload (AppSyncClientPush) of each, and how a
    // conflict's decision is written (ConflictWriting).

    // MARK: Local objects

    /// Creates or updates an object as a local change: the object and its
    /// journal entry are stored in one transaction, or neither is.
    /// - Returns: The object's guid (a new UUID in time order, ``SyncCore/TimeOrderedUUID``, when `guid` is `nil`).
    /// - Throws: ``SyncCore/SyncClientError`` ``SyncCore/SyncClientError/Code/refused`` (stack `"appsync"`,
    ///   status 409) when another live local object holds the same primary key, 400 for a protocol field;
    ///   ``SyncCore/StoreError`` when the local store cannot keep it (``SyncCore/StoreError/Code/storageFull``
    ///   on a full disk).
    @discardableResult
    public func save(_ typeName: String, guid: String? = nil, fields: [String: SyncValue]) async throws -> String {
        try await device.save(typeName, [(guid, fields)])[0]
    }

    /// Creates or updates many objects of a type in one transaction — all of them or, when one is
    /// refused or the store fails, none — each journaled as ``save(_:guid:fields:)`` does: an import's path.
    /// - Parameters:
    ///   - typeName: The type.
    ///   - objects: Each object's guid (a new UUID in time order when `nil`) and fields.
    /// - Returns: The objects' guids, in the order given.
    /// - Throws: ``SyncCore/SyncClientError`` ``SyncCore/SyncClientError/Code/refused`` (stack `"appsync"`,
    ///   status 409) when an object's primary key is held by another live object
    ///   (one saved before it in `objects` included); ``SyncCore/StoreError`` as ``save(_:guid:fields:)``.
    @discardableResult
    public func save(_ typeName: String, _ objects: [(guid: String?, fields: [String: SyncValue])]) async throws -> [String] {
        try await device.save(typeName, objects)
    }

    /// Soft-deletes an object (`isdeleted` = 1) as a local change, journaled in the same transaction.
    /// - Throws: ``SyncCore/SyncClientError`` ``SyncCore/SyncClientError/Code/refused`` (stack `"appsync"`,
    ///   status 404) when there is no such object; ``SyncCore/StoreError`` as ``save(_:guid:fields:)``.
    public func delete(_ typeName: String, guid: String) async throws {
        try await device.delete(typeName, guid: guid)
    }

    /// The object `guid`, deleted or not.
    public func object(_ typeName: String, guid: String) async throws -> AppSyncObject? {
        try await device.object(typeName, guid: guid)
    }

    /// The live objects of a type, in guid order.
    public func objects(_ typeName: String) async throws -> [AppSyncObject] {
        try await device.objects(typeName)
    }

    /// The client's counter (how many local changes it made), and per type
    /// its `counter_lastsync` (the counter at the last upload) and
    /// `servercounter_lastsync` (where the downloads reached). What is sent
    /// comes from the journal; the first two are a read-out of the seed's names.
    public func counters(_ typeName: String) async throws -> (counter: Int64, counterLastSync: Int64, serverCounterLastSync: Int64) {
        try await device.counters(typeName)
    }

    // MARK: Sync

    /// Carries out the application's answers to conflicts, downloads, then
    /// uploads, every type (the seed's `doSync()`); waits first for a sync already running.
    /// - Throws: ``SyncCore/SyncClientError`` when the server cannot be reached or
    ///   refuses, ``SyncCore/StoreError`` when the local store fails
    ///   (``SyncCore/StoreError/Code/storageFull`` on a full disk: nothing of the
    ///   failed step is stored, and a later sync takes it up again).
    @discardableResult
    public func sync() async throws -> Report {
        try await syncGate.run { try await AppSyncClientSession(client: self).run() }
    }

    /// Forgets both sync counters, then syncs: everything is downloaded, and
    /// every pending local change and every local object the server does not
    /// list (one it lost, say) is uploaded.
    /// - Throws: as ``sync()``.
    @discardableResult
    public func fullSync() async throws -> Report {
        try await syncGate.run { try await AppSyncClientSession(client: self).run(full: true) }
    }
}
