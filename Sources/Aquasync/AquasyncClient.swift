#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
/// try await client.sync()           // pull, then push (one request when nothing waits to be pulled)
/// ```
///
/// The library, not the application, keeps the sync columns: `gid`,
/// `deviceToken`, `localTimestamp`, `isDeleted`, and the device's
/// `latestUST`. What must be sent is the device's journal
/// (``SyncCore/SyncJournal``): a record is dirty while its entry is pending.
/// What is not the store, the account, the transport or the codec is in
/// ``Configuration``: where the server is mounted, retries, the clocks, the
/// conflict policy and the pack size.
///
/// ## Rules it follows
/// - A local write stamps `localTimestamp` with the clock, at least one
///   millisecond after the version it replaces, so a local edit always
///   supersedes what it edited, and journals the change in the same
///   transaction, based on the server's version the device held (the
///   ArchCopy, whose token is `deviceToken@localTimestamp`).
/// - A sync first carries out the answers the application gave to open
///   conflicts (``SyncCore/SyncStore/answerConflict(_:with:for:)``), then
///   pulls, then pushes — in one request when nothing waits to be pulled
///   (``sync()``).
/// - ``pullSync()`` writes a pulled version over a record without a pending
///   change. For a record with one, the journal judges the pulled version by
///   content (``SyncCore/JournalEntry/classify(_:)``), never by clocks: the
///   server still holds the ArchCopy — the change stays and is pushed; the
///   server holds what the device holds — the change is done; anything else
///   is a conflict, which ``Configuration/conflictPolicy`` decides with the
///   local edit as `local`, the server's version as `remote` (flat deltas, see
///   ``AquasyncNewestWins``) and the ArchCopy as `base` (the model's fields only):
///   - `keepLocal` — the local version is pushed, stamped one millisecond
///     after the server's when ``AquasyncNewestWins`` would not already take
///     it over the server's, so the server's default policy takes it;
///   - `takeRemote` — the record takes the server's version; nothing is left to push;
///   - `merged` — the merged fields become a local edit, stamped one
///     millisecond after the later of the two versions;
///   - `keepBoth` — the record takes the server's version, and the local
///     edit becomes a new record (a new gid);
///   - `deferred` (``SyncCore/AskUserPolicy``) — the conflict stays open in the
///     journal with base, local and remote, the local data stays, and nothing
///     of the record is pushed until the application answers.
///
///   Each page of a pull is applied with its `latestUST` in one transaction.
/// - ``pushSync()`` sends the journal's entries that are ready, in packs with
///   fresh `_id`s, and retries a pack unchanged on transient failures. A
///   pushed change leaves the journal once the server took it, unless the
///   record was edited while its pack was in flight; a change the server
///   refused for good (the answer's `refused`) leaves the journal and is
///   reported in ``Report/refused``.
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
    public struct Configuration: StackClientConfiguration {
        /// The settings every client shares: base path (`/deltas` by default), retries, clocks (the wall
        /// clock stamps `localTimestamp` of local changes) and the conflict policy (``AquasyncNewestWins``,
        /// the seed's rule, by default). They read and write by name: `configuration.retry = .none`.
        public var client: SyncClientConfiguration
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
            self.client = SyncClientConfiguration(
                basePath: basePath, retry: retry, clock: clock, sleeper: sleeper, conflictPolicy: conflictPolicy)
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
        self.endpoint = SyncEndpoint(transport: transport, codec: codec, configuration: configuration.client)
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

    /// Creates or replaces a record's fields and journals the change; see ``AquasyncLocalRecords/save(_:gid:fields:)``.
    @discardableResult
    public func save(_ model: String, gid: String? = nil, fields: [String: SyncValue]) async throws -> String {
        try await records.save(model, gid: gid, fields: fields)
    }

    /// Soft-deletes a record and journals the change.
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
        public var pulled = 0
        /// Local versions the server took.
        public var pushed = 0
        /// Conflicts waiting for the application's answer after the sync
        /// (``SyncCore/SyncStore/openConflicts(for:)`` lists them).
        public var openConflicts = 0
        /// Changes the server refused for good, with its reasons: they left
        /// the journal; the record keeps the local version on this device.
        public var refused: [RecordKey: String] = [:]

        /// An empty report.
        public init() {}
    }

    /// Carries out the answers given to conflicts, pulls, then pushes.
    ///
    /// With changes to send, the pull and the push are one request when nothing waits to be pulled: the
    /// first pack goes on the condition that the account has no change after ``latestUST()``, and a
    /// server that cannot apply it on that condition answers with the changes to pull first (see
    /// docs/aquasync.md, "One request when nothing waits to be pulled").
    /// - Throws: ``SyncCore/SyncClientError`` when the server cannot be reached or refuses the request,
    ///   ``SyncCore/StoreError`` when the local store fails (``SyncCore/StoreError/Code/storageFull``
    ///   when it is full: nothing of the page that did not fit is kept, and a later sync takes it again).
    @discardableResult
    public func sync() async throws -> Report {
        try await syncGate.run {
            var report = Report()
            report.pulled = try await carryOutAnswers()
            let from = try await latestUST()
            switch try await runPush(into: &report, unlessChangedAfter: from) {
            case .sent(upToDate: true):
                break
            case .nothingSent, .sent(upToDate: false):
                report.pulled += try await runPull(from: try await latestUST())
            case .pullFirst(let answer):
                report.pulled += try await runPull(from: from, answered: answer)
                try await runPush(into: &report)
            }
            report.openConflicts = try await waitingConflicts()
            return report
        }
    }

    /// Carries out the answers given to conflicts, then brings the server's
    /// changes made by other devices since ``latestUST()``.
    /// - Returns: ``Report/pulled`` and ``Report/openConflicts``.
    @discardableResult
    public func pullSync() async throws -> Report {
        try await syncGate.run {
            var report = Report()
            report.pulled = try await carryOutAnswers()
            report.pulled += try await runPull(from: try await latestUST())
            report.openConflicts = try await waitingConflicts()
            return report
        }
    }

    /// Carries out the answers given to conflicts, then sends the journal's
    /// changes that are ready.
    /// - Returns: ``Report/pushed`` and ``Report/refused``.
    @discardableResult
    public func pushSync() async throws -> Report {
        try await syncGate.run {
            var report = Report()
            report.pulled = try await carryOutAnswers()
            try await runPush(into: &report)
            return report
        }
    }

    /// How many conflicts of Aquasync's records wait for the application's answer (another stack's
    /// records in the same store are not counted).
    private func waitingConflicts() async throws -> Int {
        try await store.openConflicts(for: account).count { $0.awaitsAnswer && StoredDelta.model(of: $0.key.collection) != nil }
    }

    /// The device's token and the clock's time in milliseconds, for versions a sync writes.
    private func stamp() async throws -> Stamp {
        Stamp(deviceToken: try await deviceToken(), now: Delta.milliseconds(configuration.clock.now()))
    }

    /// Carries out every answered conflict.
    /// - Returns: How many server versions were written locally.
    private func carryOutAnswers() async throws -> Int {
        try await records.adoptLegacyDirtyRecords()
        let stamp = try await stamp()
        return try await store.carryOutAnswers(for: account) { entry in
            entry.remote != nil && StoredDelta.model(of: entry.key.collection) != nil
        } writer: { tx in
            AquasyncConflictWriter(stamp: stamp, pulled: nil)
        }
    }

    /// Brings the server's changes made by other devices after `ust`, page after page; the first page is
    /// `answered` when the server sent it already (the answer to a pack sent on condition).
    /// - Returns: How many server versions were written locally.
    private func runPull(from ust: Int64, answered: PulledAnswer? = nil) async throws -> Int {
        var applied = 0
        let token = try await deviceToken()
        let (endpoint, basePath, policy) = (endpoint, configuration.basePath, configuration.conflictPolicy)
        // Three stages side by side: the fetch reads only where the page ends, so that the next page is
        // asked for at once; the prepare stage reads the page's deltas (from JSON straight into the
        // stored form); the apply stage files them.
        typealias Fetched = (page: PulledPage, response: SyncResponse, request: SyncRequest)
        try await PagedPull.run(from: ust) { (ust: Int64) -> (page: Fetched, next: Int64?)? in
            let (request, response): (SyncRequest, SyncResponse)
            if let answered, ust == answered.from {
                (request, response) = (answered.request, answered.response)
            } else {
                request = endpoint.request(.get, "\(basePath)/from:\(ust)?deviceToken=\(token)")
                response = try await endpoint.send(request)
            }
            if response.status == 204 { return nil }
            let page = try endpoint.read(response, of: request) { codec in
                try PulledPage(
                    response.body, codec: codec,
                    missingLatestUST: SyncClientError(
                        .invalidResponse, status: response.status,
                        "\(request.method) \(request.pathWithoutQuery): the server's pack carries no latestUST as an integer"))
            }
            return (page: (page, response, request), next: page.hasMore ? page.latestUST : nil)
        } prepare: { (fetched: consuming Fetched) in
            let (page, response, request) = fetched
            return (versions: try endpoint.read(response, of: request) { codec in try page.versions(with: codec) }, latestUST: page.latestUST)
        } apply: { (prepared: consuming (versions: [PulledPage.Version], latestUST: Int64)) in
            let (versions, latestUST) = prepared
            let stamp = try await stamp()
            applied += try await store.transaction(for: account) { tx in
                var applied = 0
                try await tx.journal.prefetch(versions.map(\.encoded.key))
                for version in versions where try await Self.apply(version, policy: policy, stamp: stamp, in: tx) {
                    applied += 1
                }
                try await tx.setMetadata(latestUST, AquasyncLocalRecords.latestUSTKey)
                return applied
            }
        }
        return applied
    }

    /// Writes a pulled version, as the journal's rules say (see the type's
    /// rules); `true` when the server's version was written.
    private static func apply(
        _ version: PulledPage.Version, policy: any ConflictPolicy, stamp: Stamp, in tx: any StoreTransaction
    ) async throws -> Bool {
        let (key, model) = (version.encoded.key, version.model)
        guard let entry = try await tx.journal.entry(for: key), try await tx.record(key) != nil else {
            try await tx.put(version.encoded)
            return true
        }
        let incoming = StoredDelta.serverVersion(try version.delta(), model: model)
        let writer = AquasyncConflictWriter(stamp: stamp, pulled: version.encoded)
        return try await tx.journal.take(incoming, pending: entry, policy: policy, writer: writer).wroteServerVersion
    }

    /// A change read from the journal to be pushed, with its record as the store keeps it: a pack is
    /// written from that form (``SyncCore/StoredFieldsDocument``), and the record is decoded only when
    /// the journal needs the version the server took.
    private struct Outgoing: Sendable {
        var model: String
        var stored: EncodedStoredRecord
        var sequence: Int64
        var key: RecordKey { stored.key }

        /// The record's fields as the pack carries them: the delta's wire form, without `ust`.
        var wireFields: StoredFields { StoredFields(stored.fields, omitting: [AquasyncLocalRecords.legacyDirtyColumn]) }

        /// The version the server holds once it took this change.
        /// - Throws: ``SyncCore/StoreError`` when the stored record is not a delta.
        func serverVersion() throws -> ServerVersion {
            StoredDelta.serverVersion(try StoredDelta.delta(of: stored.decoded().record), model: model)
        }
    }

    /// A pull's first page, sent by the server as its answer to a pack it did not apply.
    private struct PulledAnswer: Sendable {
        /// The UST the pull starts after: the device's `latestUST` the pack was sent on.
        var from: Int64
        var request: SyncRequest
        var response: SyncResponse
    }

    /// What the server made of one pack.
    private enum PackAnswer: Sendable {
        /// Applied (or applied before): the answer.
        case applied(SyncValue)
        /// Sent on condition and not applied: the account changed after the device's `latestUST`.
        case pullFirst(PulledAnswer)
    }

    /// How a push went.
    private enum PushOutcome {
        /// Nothing was ready to send.
        case nothingSent
        /// Every ready change was sent; `upToDate` when the first pack was sent on condition and its
        /// answer moved the device's `latestUST` past it: nothing was written that the device has not seen.
        case sent(upToDate: Bool)
        /// The first pack, sent on condition, was not applied; nothing was sent after it.
        case pullFirst(PulledAnswer)
    }

    /// Sends the journal's ready changes, pack after pack.
    /// - Parameter latestUST: When given, the first pack goes on the condition that the account has no
    ///   change after it; the push stops at that pack when the server answers with changes to pull first.
    @discardableResult
    private func runPush(into report: inout Report, unlessChangedAfter latestUST: Int64? = nil) async throws -> PushOutcome {
        // The journal is read a pack at a time, and three packs are in hand at once: while pack N goes to
        // the server, the device records that the server took pack N - 1 and reads pack N + 1. The read
        // does not wait for that write (``SyncStore/readCommitted(for:_:)``): its entries come after pack
        // N's, and a change written meanwhile is sent with the sequence read, so it stays pending if it
        // changed again. Packs still go one after another, and the device holds three at most.
        var condition = latestUST
        var (chunk, last, more) = try await readyChanges(after: nil)
        var answered: (chunk: [Outgoing], answer: SyncValue, onCondition: Bool)?
        var (sentAny, upToDate) = (false, false)
        while !chunk.isEmpty || more || answered != nil {
            let (sent, after, readsMore, sentOnCondition) = (chunk, last, more, chunk.isEmpty ? nil : condition)
            if !sent.isEmpty { (condition, sentAny) = (nil, true) }
            // `Optional.none`, not `nil`: SyncValue takes `nil` as its own `.null`.
            async let sending: PackAnswer? = sent.isEmpty ? Optional.none : send(sent, unlessChangedAfter: sentOnCondition)
            async let reading = readsMore ? readyChanges(after: after) : ([], after, false)
            if let (previous, answer, onCondition) = answered {
                let (refused, movedPast) = try await acknowledge(previous, answer: answer)
                if onCondition { upToDate = movedPast }
                report.refused.merge(refused) { _, new in new }
                report.pushed += previous.count - refused.count
            }
            switch try await sending {
            case nil: answered = nil
            case .applied(let answer)?: answered = (sent, answer, sentOnCondition != nil)
            case .pullFirst(let pull)?: return .pullFirst(pull)
            }
            (chunk, last, more) = try await reading
        }
        return sentAny ? .sent(upToDate: upToDate) : .nothingSent
    }

    /// The journal's changes of Aquasync records that are ready to send, from a pack's worth of entries
    /// after the entry of `key`; the key the next read starts after, and whether more entries may follow.
    /// Read beside the acknowledgement of the pack before, which writes only entries before `key`.
    private nonisolated func readyChanges(after key: RecordKey?) async throws -> (changes: [Outgoing], last: RecordKey?, more: Bool) {
        let limit = configuration.packSize
        return try await store.readCommitted(for: account) { tx in
            let pending = try await tx.journal.pendingChanges(after: key, limit: limit)
            let ready = pending.filter { $0.isReadyToSend && StoredDelta.model(of: $0.key.collection) != nil }
            let records = try await tx.encodedRecords(at: ready.map(\.key))
            var changes: [Outgoing] = []
            for change in ready {
                guard let model = StoredDelta.model(of: change.key.collection), let stored = records[change.key] else { continue }
                changes.append(Outgoing(model: model, stored: stored, sequence: change.sequence))
            }
            return (changes, pending.last?.key ?? key, pending.count == limit)
        }
    }

    /// Sends one pack of changes, on the condition that the account has no change after `latestUST` when
    /// it is given; the server's answer.
    private nonisolated func send(_ chunk: [Outgoing], unlessChangedAfter latestUST: Int64?) async throws -> PackAnswer {
        var models: [String: [StoredFields]] = [:]
        for change in chunk { models[change.model, default: []].append(change.wireFields) }
        // A new id for each pack; the endpoint's retry sends the same bytes, which the server knows as the last pack.
        let pack = DeltaPack.document(models: models, id: TimeOrderedUUID.make().uuidString.lowercased())
        var path = configuration.basePath
        if let latestUST { path += "?latestUST=\(latestUST)&deviceToken=\(try await deviceToken())" }
        let request = SyncRequest(
            method: .post, path: path, contentType: codec.primaryMediaType,
            accept: codec.primaryMediaType, body: try pack.encoded(with: codec))
        let response = try await endpoint.send(request, idempotent: true, accepting: latestUST == nil ? [] : [409])
        if response.status == 409, let latestUST {
            return .pullFirst(PulledAnswer(from: latestUST, request: request, response: response))
        }
        return .applied(try endpoint.decode(SyncValue.self, from: response, of: request))
    }

    /// Records the server's answer to a pack: taken changes are acknowledged in the journal, refused
    /// ones leave it. Returns the refusals, and whether the device's `latestUST` moved past the pack.
    private func acknowledge(_ chunk: [Outgoing], answer: SyncValue) async throws -> (refused: [RecordKey: String], movedPast: Bool) {
        let refusals = DeltaPack.refusals(in: answer)
        return try await store.transaction(for: account) { tx in
            // Nothing but this pack was written since this device's latestUST: it moves past the pack.
            var movedPast = false
            if case .integer(let before)? = answer["ustBefore"], case .integer(let latest)? = answer["latestUST"],
                try await tx.metadata(AquasyncLocalRecords.latestUSTKey) ?? 0 == before
            {
                try await tx.setMetadata(latest, AquasyncLocalRecords.latestUSTKey)
                movedPast = true
            }
            var refused: [RecordKey: String] = [:]
            var taken: [PendingChange] = []
            var sent: [RecordKey: Outgoing] = [:]
            for change in chunk {
                if let reason = refusals[change.key] {
                    refused[change.key] = reason
                } else {
                    taken.append(PendingChange(key: change.key, sequence: change.sequence, isReadyToSend: true))
                    sent[change.key] = change
                }
            }
            try await tx.journal.prefetch(Array(refused.keys))
            for key in refused.keys { try await tx.journal.remove(key) }
            try await tx.journal.acknowledge(taken) { key in
                guard let change = sent[key] else { throw StoreError(.invalidArgument, "no change of \(key) was sent") }
                return try change.serverVersion()
            }
            return (refused, movedPast)
        }
    }
}

/// The device's token and the time, for the versions a sync writes itself.
struct Stamp: Sendable {
    var deviceToken: String
    /// Milliseconds since 1970.
    var now: Int64
    var date: Date { Date(timeIntervalSince1970: Double(now) / 1000) }
}

/// The error an Aquasync client throws when a request fails: the name it had
/// before every stack's client shared ``SyncCore/SyncClientError``.
public typealias AquasyncClientError = SyncClientError
