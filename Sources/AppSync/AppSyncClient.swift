import FoundationEssentials
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
    private nonisolated let endpoint: SyncEndpoint
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
    }

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
        try await save(typeName, [(guid, fields)])[0]
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
        let type = try self.type(typeName)
        for (_, fields) in objects {
            if let reserved = fields.keys.first(where: { AppSyncObject.protocolFields.contains($0) }) {
                throw SyncClientError.appSync(status: 400, "\(reserved) is a protocol field")
            }
        }
        let guids = objects.map { $0.guid ?? TimeOrderedUUID.make().uuidString }
        // A guid just made names no object and no journal entry: only the given ones are read ahead.
        let given = zip(objects, guids).filter { $0.0.guid != nil }.map { StoredObject.key(typeName, $0.1) }
        let made = zip(objects, guids).filter { $0.0.guid == nil }.map { StoredObject.key(typeName, $0.1) }
        let time = configuration.clock.now()
        try await store.transaction(for: account) { tx in
            try await tx.prefetch(given)
            try await tx.journal.prefetch(given)
            try await tx.assumeNeverWritten(made)
            try await tx.journal.assumeNoEntries(for: made)
            for (guid, (_, fields)) in zip(guids, objects) {
                let existing = try await tx.record(StoredObject.key(typeName, guid)).map { try StoredObject.object($0.record) }
                let now = Self.wholeSeconds(time)
                let object = AppSyncObject(
                    guid: guid, fields: fields, timestampCreated: existing?.timestampCreated ?? now, timestampLastUpdate: now)
                if let primaryKey = type.primaryKeyValue(of: object),
                    let owner = try await StoredObject.owner(of: primaryKey, type: typeName, in: tx), owner != guid
                {
                    throw SyncClientError.appSync(status: 409, "object \(owner) already has this primary key")
                }
                try await Self.writeLocalChange(
                    object, replacing: existing, action: existing == nil ? .add : .modify, type: type, at: time, in: tx)
            }
        }
        return guids
    }

    /// Soft-deletes an object (`isdeleted` = 1) as a local change, journaled in the same transaction.
    /// - Throws: ``SyncCore/SyncClientError`` ``SyncCore/SyncClientError/Code/refused`` (stack `"appsync"`,
    ///   status 404) when there is no such object; ``SyncCore/StoreError`` as ``save(_:guid:fields:)``.
    public func delete(_ typeName: String, guid: String) async throws {
        let type = try self.type(typeName)
        let time = configuration.clock.now()
        try await store.transaction(for: account) { tx in
            guard let stored = try await tx.record(StoredObject.key(typeName, guid)) else {
                throw SyncClientError.appSync(status: 404, "no \(typeName) \(guid)")
            }
            let existing = try StoredObject.object(stored.record)
            var deleted = existing
            deleted.isDeleted = true
            deleted.timestampLastUpdate = Self.wholeSeconds(time)
            try await Self.writeLocalChange(deleted, replacing: existing, action: .delete, type: type, at: time, in: tx)
        }
    }

    /// The object `guid`, deleted or not.
    public func object(_ typeName: String, guid: String) async throws -> AppSyncObject? {
        try await store.transaction(for: account) { tx in
            try await tx.record(StoredObject.key(typeName, guid)).map { try StoredObject.object($0.record) }
        }
    }

    /// The live objects of a type, in guid order.
    public func objects(_ typeName: String) async throws -> [AppSyncObject] {
        try await store.transaction(for: account) { tx in
            var objects: [AppSyncObject] = []
            for try await stored in tx.allRecords(in: StoredObject.collection(typeName)) where !stored.record.isDeleted {
                objects.append(try StoredObject.object(stored.record))
            }
            return objects
        }
    }

    /// The client's counter (how many local changes it made), and per type
    /// its `counter_lastsync` (the counter at the last upload) and
    /// `servercounter_lastsync` (where the downloads reached). What is sent
    /// comes from the journal; the first two are a read-out of the seed's names.
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
        /// Objects sent to the server and taken by it.
        public var uploaded = 0
        /// Conflicts handed to the policy (same guid or same primary key).
        public var conflicts = 0
        /// Objects the server rejected because a different object holds their
        /// primary key, by guid, with its reasons: conflicts, whose changes stay
        /// in the journal until the next download settles them.
        public var rejected: [String: String] = [:]
        /// Changes the server refused for good (status 422), by key
        /// (collection `appsync/<type>`, id the guid), with its reasons: they
        /// left the journal and are not sent again; the local object stays as written.
        public var refused: [RecordKey: String] = [:]
        /// Conflicts waiting for the application's answer after the sync
        /// (``SyncCore/SyncStore/openConflicts(for:)``).
        public var openConflicts = 0

        /// An empty report.
        public init() {}
    }

    /// Carries out the application's answers to conflicts, downloads, then
    /// uploads, every type (the seed's `doSync()`); waits first for a sync already running.
    /// - Throws: ``SyncCore/SyncClientError`` when the server cannot be reached or
    ///   refuses, ``SyncCore/StoreError`` when the local store fails
    ///   (``SyncCore/StoreError/Code/storageFull`` on a full disk: nothing of the
    ///   failed step is stored, and a later sync takes it up again).
    @discardableResult
    public func sync() async throws -> Report {
        try await syncGate.run { try await runSync() }
    }

    /// Forgets both sync counters, then syncs: everything is downloaded, and
    /// every pending local change and every local object the server does not
    /// list (one it lost, say) is uploaded.
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
            return try await runSync(full: true)
        }
    }

    private func runSync(full: Bool = false) async throws -> Report {
        var report = Report()
        for name in types.keys.sorted() {
            let type = try self.type(name)
            try await journalCounterMarkedChanges(type)
            try await carryOutAnswers(type)
            let listed = try await syncFromServer(type, into: &report)
            if full { try await journalObjects(of: type, notIn: listed) }
            try await syncToServer(type, into: &report)
        }
        let collections = Set(types.keys.map(StoredObject.collection))
        report.openConflicts = try await store.openConflicts(for: account).count {
            $0.awaitsAnswer && collections.contains($0.key.collection)
        }
        return report
    }

    /// Carries out the answers the application gave to conflicts of `type`.
    private func carryOutAnswers(_ type: AppSyncObjectType) async throws {
        let collection = StoredObject.collection(type.name)
        let time = configuration.clock.now()
        _ = try await store.carryOutAnswers(for: account) { $0.key.collection == collection } writer: { _ in
            ConflictWriting(type: type, time: time, downloaded: nil)
        }
    }

    /// Downloads the changes of `type` since `servercounter_lastsync`.
    /// - Returns: the guids the server listed.
    @discardableResult
    private func syncFromServer(_ type: AppSyncObjectType, into report: inout Report) async throws -> Set<String> {
        let policy = configuration.conflictPolicy
        var listed: Set<String> = []
        let (endpoint, basePath) = (endpoint, configuration.basePath)
        try await PagedPull.run(from: try await counters(type.name).serverCounterLastSync) {
            (from: Int64) -> (page: AppSyncMessages.ListAnswer, next: Int64?)? in
            let answer = try await endpoint.send(
                endpoint.request(.get, "\(basePath)/\(type.name)/list/\(from)"), as: AppSyncMessages.ListAnswer.self)
            return (page: answer, next: answer.result.more == true ? answer.result.servercounter : nil)
        } apply: { (answer: AppSyncMessages.ListAnswer) in
            let remote = answer.objects
            listed.formUnion(remote.map(\.guid))
            let serverCounter = answer.result.servercounter
            let time = configuration.clock.now()
            let (downloaded, conflicts) = try await store.transaction(for: account) { tx in
                var downloaded = 0
                var conflicts = 0
                let keys = remote.map { StoredObject.key(type.name, $0.guid) }
                try await tx.prefetch(keys)
                try await tx.journal.prefetch(keys)
                for object in remote {
                    switch try await Self.applyDownloaded(object, type: type, policy: policy, at: time, in: tx) {
                    case .unchanged: break
                    case .written: downloaded += 1
                    case .conflict(let wrote):
                        conflicts += 1
                        if wrote { downloaded += 1 }
                    }
                }
                try await tx.setMetadata(serverCounter, ClientState.serverCounterLastSync(type.name))
                return (downloaded, conflicts)
            }
            report.downloaded += downloaded
            report.conflicts += conflicts
        }
        return listed
    }

    /// Journals, as new on this device, the objects of `type` the server did
    /// not list in a full download and no pending change will send.
    private func journalObjects(of type: AppSyncObjectType, notIn listed: Set<String>) async throws {
        let time = configuration.clock.now()
        try await store.transaction(for: account) { tx in
            var missing: [AppSyncObject] = []
            for try await stored in tx.allRecords(in: StoredObject.collection(type.name))
            where !listed.contains(stored.record.id.rawValue) {
                missing.append(try StoredObject.object(stored.record))
            }
            for object in missing where try await tx.journal.entry(for: StoredObject.key(type.name, object.guid)) == nil {
                try await tx.journal.recordLocalChange(
                    object.isDeleted ? .delete : .add, local: StoredObject.neutral(object, type: type.name, node: StoredObject.clientNode),
                    at: time, basedOn: nil)
            }
        }
    }

    /// Journals, once per type, the changes a store written by an earlier
    /// version of this client marked by counters alone (`counter_lastupdate`
    /// above `counter_lastsync`). They have no ArchCopy: the server's
    /// version, if one comes, is a conflict unless it holds the same.
    private func journalCounterMarkedChanges(_ type: AppSyncObjectType) async throws {
        try await store.transaction(for: account) { tx in
            let adopted = ClientState.journalAdopted(type.name)
            guard try await tx.metadata(adopted) != true else { return }
            let lastSync = try await tx.metadata(ClientState.counterLastSync(type.name)) ?? 0
            var marked: [SyncRecord] = []
            for try await stored in tx.allRecords(in: StoredObject.collection(type.name)) {
                if let counter = stored.record.fields["counter_lastupdate"]?.integerValue, counter > lastSync {
                    marked.append(stored.record)
                }
            }
            for record in marked where try await tx.journal.entry(for: record.key) == nil {
                let object = try StoredObject.object(record)
                try await tx.put(StoredObject.record(object, type: type.name))
                try await tx.journal.recordLocalChange(
                    object.isDeleted ? .delete : .modify, local: StoredObject.neutral(object, type: type.name, node: StoredObject.clientNode),
                    at: object.timestampLastUpdate, basedOn: nil)
            }
            try await tx.setMetadata(true, adopted)
        }
    }

    private enum Applied { case unchanged, written, conflict(wrote: Bool) }

    private static func applyDownloaded(
        _ remote: AppSyncObject, type: AppSyncObjectType, policy: any ConflictPolicy, at time: Date,
        in tx: any StoreTransaction
    ) async throws -> Applied {
        let key = StoredObject.key(type.name, remote.guid)
        if let stored = try await tx.record(key) {
            let local = try StoredObject.object(stored.record)
            if let entry = try await tx.journal.entry(for: key) {
                return try await applyDownloaded(remote, over: local, pending: entry, type: type, policy: policy, at: time, in: tx)
            }
            if local == remote { return .unchanged }
            try await StoredObject.put(remote, replacing: local, type: type, in: tx)
            return .written
        }
        if !remote.isDeleted, let primaryKey = type.primaryKeyValue(of: remote),
            let owner = try await StoredObject.owner(of: primaryKey, type: type.name, in: tx),
            let ownerStored = try await tx.record(StoredObject.key(type.name, owner))
        {
            let holder = try StoredObject.object(ownerStored.record)
            try await settlePrimaryKeyClash(remote, heldBy: holder, type: type, policy: policy, at: time, in: tx)
            return .conflict(wrote: true)
        }
        try await StoredObject.put(remote, replacing: nil, type: type, in: tx)
        return .written
    }

    /// Applies the server's version of an object that has a pending local
    /// change, as the journal judges it (``SyncCore/SyncJournal/take(_:pending:policy:writer:)``):
    /// exactly a conflict when the server's version moved away from the ArchCopy to something else
    /// than the local version.
    private static func applyDownloaded(
        _ remote: AppSyncObject, over local: AppSyncObject, pending entry: JournalEntry, type: AppSyncObjectType,
        policy: any ConflictPolicy, at time: Date, in tx: any StoreTransaction
    ) async throws -> Applied {
        let incoming = StoredObject.serverVersion(remote, type: type.name)
        let writer = ConflictWriting(type: type, time: time, downloaded: remote)
        let outcome = try await tx.journal.take(incoming, pending: entry, policy: policy, writer: writer)
        switch outcome {
        case .unchanged, .stillOpen: return .unchanged
        case .agreed: return local == remote ? .unchanged : .written
        case .decided, .opened: return .conflict(wrote: outcome.wroteServerVersion)
        }
    }

    /// Settles a downloaded live object whose primary key a different local
    /// object holds: one object under the server's guid is left, and the local
    /// one is soft-deleted as a local change. A primary key cannot be held
    /// twice, so keep-both and ask-the-user take the server's fields.
    private static func settlePrimaryKeyClash(
        _ remote: AppSyncObject, heldBy holder: AppSyncObject, type: AppSyncObjectType, policy: any ConflictPolicy,
        at time: Date, in tx: any StoreTransaction
    ) async throws {
        let holderKey = StoredObject.key(type.name, holder.guid)
        let resolution = await policy.resolve(
            Conflict(
                local: StoredObject.neutral(holder, type: type.name, node: StoredObject.clientNode),
                remote: StoredObject.neutral(remote, type: type.name, node: StoredObject.serverNode),
                base: try await tx.journal.entry(for: holderKey)?.archCopy?.record, resolvingSide: .client))
        var retired = holder
        retired.isDeleted = true
        retired.timestampLastUpdate = max(holder.timestampLastUpdate, wholeSeconds(time))
        try await writeLocalChange(retired, replacing: holder, action: .delete, type: type, at: time, in: tx)
        switch resolution {
        case .takeRemote, .keepBoth, .deferred:
            try await StoredObject.put(remote, replacing: nil, type: type, in: tx)
        case .keepLocal, .merged:
            var object = remote
            if case .merged(let merged) = resolution {
                object.fields = merged.fields.filter { !AppSyncObject.protocolFields.contains($0.key) }
            } else {
                object.fields = holder.fields
            }
            object.timestampLastUpdate = superseding(remote, at: time)
            try await writeLocalChange(
                object, replacing: nil, action: .modify, type: type, at: time,
                basedOn: StoredObject.serverVersion(remote, type: type.name), in: tx)
        }
    }

    /// Uploads the ready changes of `type`, ``Configuration/updateSize`` objects an update; each update's
    /// answer is settled in the journal before the next goes up, so an upload cut short resumes with what
    /// the server has not answered (sending an object twice is harmless: the server skips it).
    private func syncToServer(_ type: AppSyncObjectType, into report: inout Report) async throws {
        let name = type.name
        let (ready, counterNow) = try await store.transaction(for: account) { tx in
            (
                try await tx.journal.entries(in: [StoredObject.collection(name)]).filter(\.isReadyToSend),
                try await tx.metadata(ClientState.counter) ?? 0
            )
        }
        var start = ready.startIndex
        while start < ready.endIndex {
            let batch = ready[start..<min(start + configuration.updateSize, ready.endIndex)]
            start = batch.endIndex
            let settled = try await upload(batch, of: name, counterNow: counterNow)
            report.uploaded += settled.uploaded
            report.rejected.merge(settled.rejected) { _, new in new }
            report.refused.merge(settled.refused) { _, new in new }
        }
    }

    /// Sends one update of the objects `entries` name and settles its answer: taken objects leave the
    /// journal (unless changed again meanwhile), refusals are noted, and `servercounter_lastsync` moves
    /// to the answer's `servercounter` when nothing else was written on the server since it.
    private func upload(_ entries: ArraySlice<JournalEntry>, of name: String, counterNow: Int64) async throws -> Report {
        let (pending, serverLastSync) = try await store.transaction(for: account) { tx in
            let records = try await tx.records(at: entries.map(\.key))
            let pending = try entries.compactMap { entry in
                try records[entry.key].map { (entry: entry, object: try StoredObject.object($0.record)) }
            }
            return (pending, try await tx.metadata(ClientState.serverCounterLastSync(name)) ?? 0)
        }
        guard !pending.isEmpty else { return Report() }
        let request = try endpoint.request(
            .post, "\(configuration.basePath)/\(name)/update",
            body: AppSyncMessages.UpdateRequest(objects: pending.map(\.object)))
        let result = try await endpoint.send(request, idempotent: true, as: AppSyncMessages.UpdateAnswer.self).result
        let rejections = Dictionary((result.rejected ?? []).map { ($0.guid, $0) }, uniquingKeysWith: { first, _ in first })
        return try await store.transaction(for: account) { tx in
            var settled = Report()
            try await tx.journal.prefetch(pending.map(\.entry.key))
            for (entry, object) in pending {
                guard let rejection = rejections[object.guid] else {
                    try await tx.journal.acknowledge(
                        entry.key, sequence: entry.sequence, holding: StoredObject.serverVersion(object, type: name))
                    settled.uploaded += 1
                    continue
                }
                let reason = rejection.reason ?? "refused"
                guard SyncFailureClass(status: rejection.status ?? AppSyncServer.conflictStatus) == .refused else {
                    settled.rejected[object.guid] = reason
                    continue
                }
                // Refused for good; a newer change made while this one was in flight is still sent.
                if try await tx.journal.entry(for: entry.key)?.sequence == entry.sequence {
                    try await tx.journal.remove(entry.key)
                }
                settled.refused[entry.key] = reason
            }
            try await tx.setMetadata(counterNow, ClientState.counterLastSync(name))
            if result.servercounterBefore == serverLastSync {
                try await tx.setMetadata(result.servercounter, ClientState.serverCounterLastSync(name))
            }
            return settled
        }
    }

    // MARK: Helpers

    private func type(_ name: String) throws -> AppSyncObjectType {
        guard let type = types[name] else { throw SyncClientError.appSync(status: 404, "'\(name)' is not a type this client syncs") }
        return type
    }

    /// Writes `object` as a local change and journals it in `tx`: both are
    /// stored, or neither. `held` is the server's version the device holds
    /// (the stored object, `previous`, unless told otherwise; it counts only
    /// when no change of the object is pending).
    private static func writeLocalChange(
        _ object: AppSyncObject, replacing previous: AppSyncObject?, action: JournalAction, type: AppSyncObjectType,
        at time: Date, basedOn held: ServerVersion?? = nil, in tx: any StoreTransaction
    ) async throws {
        try await StoredObject.put(object, replacing: previous, type: type, in: tx)
        try await tx.setMetadata((try await tx.metadata(ClientState.counter) ?? 0) + 1, ClientState.counter)
        try await tx.journal.recordLocalChange(
            action, local: StoredObject.neutral(object, type: type.name, node: StoredObject.clientNode), at: time,
            basedOn: held ?? previous.map { StoredObject.serverVersion($0, type: type.name) })
    }

    /// A `timestamp_lastupdate` for a local version that overrides `remote`:
    /// the device's time, and at least a second after the server's version,
    /// so that timestamp priority on other devices keeps it whatever the clocks' skew.
    private static func superseding(_ remote: AppSyncObject, at time: Date) -> Date {
        max(wholeSeconds(time), wholeSeconds(remote.timestampLastUpdate.addingTimeInterval(1)))
    }

    private static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}

extension AppSyncClient {
    /// How appSync writes a conflict's decision: objects keep their `timestamp_created`, a version the
    /// device writes again is stamped at least a second after the server's, and a primary key is held
    /// by one object only.
    private struct ConflictWriting: ConflictWriter {
        var type: AppSyncObjectType
        /// The sync's time.
        var time: Date
        /// The object as the server sent it, when the decision is taken during a download.
        var downloaded: AppSyncObject?

        func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
            let local = try await storedObject(entry.key, in: tx)
            let theirs = StoredObject.object(remote, created: local?.timestampCreated ?? remote.record.version.modifiedAt)
            try await StoredObject.put(theirs, replacing: local, type: type, in: tx)
        }

        /// The server holds what the device holds: its timestamps are taken, so that every device keeps the same object.
        func writeAgreement(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
            guard let downloaded else { return try await writeServerVersion(remote, over: entry, in: tx) }
            let local = try await storedObject(entry.key, in: tx)
            guard local != downloaded else { return }
            try await StoredObject.put(downloaded, replacing: local, type: type, in: tx)
        }

        func writeLocalVersion(
            _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
        ) async throws {
            guard let local = try await storedObject(version.key, in: tx) else { return }
            var mine = local
            if merged {
                mine.fields = version.fields.filter { !AppSyncObject.protocolFields.contains($0.key) }
                mine.isDeleted = false
            }
            mine.timestampLastUpdate = AppSyncClient.superseding(StoredObject.object(remote, created: local.timestampCreated), at: time)
            try await AppSyncClient.writeLocalChange(
                mine, replacing: local, action: mine.isDeleted ? .delete : .modify, type: type, at: time, basedOn: remote, in: tx)
        }

        func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
            let now = AppSyncClient.wholeSeconds(time)
            let copy = AppSyncObject(
                guid: TimeOrderedUUID.make().uuidString, fields: local.fields, timestampCreated: now, timestampLastUpdate: now)
            try await AppSyncClient.writeLocalChange(copy, replacing: nil, action: .add, type: type, at: time, basedOn: nil, in: tx)
        }

        /// Not when both are live and hold the same primary key, which a type cannot hold twice.
        func canKeepBoth(_ entry: JournalEntry, and remote: ServerVersion, in tx: any StoreTransaction) async throws -> Bool {
            guard !entry.local.isDeleted, !remote.record.isDeleted, let local = try await storedObject(entry.key, in: tx),
                let primaryKey = type.primaryKeyValue(of: local)
            else { return true }
            return type.primaryKeyValue(of: StoredObject.object(remote, created: local.timestampCreated)) != primaryKey
        }

        private func storedObject(_ key: RecordKey, in tx: any StoreTransaction) async throws -> AppSyncObject? {
            try await tx.record(key).map { try StoredObject.object($0.record) }
        }
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

    /// Whether the changes an earlier version marked by counters in `type` were journaled.
    static func journalAdopted(_ type: String) -> MetadataKey<Bool> {
        MetadataKey("journal_adopted/" + type, peer: peer)
    }

    /// The server counter the downloads of `type` reached.
    static func serverCounterLastSync(_ type: String) -> MetadataKey<Int64> {
        MetadataKey("servercounter_lastsync/" + type, peer: peer)
    }
}
