#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SyncCore

/// The Aquasync server: `GET /deltas/from:{ust}?deviceToken=…` and `POST /deltas` (optionally
/// `?latestUST={ust}&deviceToken=…`, a push on condition).
///
/// Mount it at `/deltas` in a ``ServiceRouter`` served by any transport:
///
/// ```swift
/// let server = AquasyncServer(store: try SQLiteStore(path: "sync.sqlite"), codecs: codecs)
/// let router = ServiceRouter().mounting(server, at: "/deltas")
/// ```
///
/// ## What it guarantees
/// - **UST** is the store's change position: set by the server, strictly
///   increasing, and — because a store's change sequence never lets a reader
///   miss a write that commits later — a device that pulls from its
///   `latestUST` never misses a change, even when two pushes commit out of order.
/// - A delta meeting a stored version from another device is a conflict,
///   decided by ``conflictPolicy``; the default, ``AquasyncNewestWins``,
///   applies it only when its `localTimestamp` is newer (ties to the greater
///   `deviceToken`), so replicas converge whatever order pushes arrive in. A
///   delta from the device that made the stored version replaces it when its
///   `localTimestamp` is newer: a device stamps each write after the last.
/// - A pack is applied atomically, and once: its `_id` is remembered in the
///   same transaction, so a pack sent again (a retry after a lost answer) is
///   answered `success` without being applied twice.
/// - A pack with any invalid delta is refused with 422 and nothing of it is applied.
/// - A delta that ``validation`` refuses is answered per record — listed
///   under `refused` in the 200 answer (``DeltaPack/Refusal``) — and not
///   stored, while the rest of its pack goes through. A pack sent again gets
///   the same refusals.
/// - When a pack's deltas were stored as sent (none met a conflict) and are
///   the account's newest changes, one after another, the answer carries `ustBefore` (the UST right before them)
///   and `latestUST` (the last of them): a device whose `latestUST` is
///   `ustBefore` moves it to `latestUST`, so its next pull does not read its
///   own writes back (as appSync's `servercounter_before`).
/// - A push on condition (`?latestUST={ust}`) is applied only when the account has
///   no change after `ust`; otherwise nothing of it is applied and the answer is
///   409 with what a pull from `ust` answers, so a device with nothing to pull
///   syncs in one request.
/// - Every account has its own data: the account comes from the transport's
///   authenticator, never from the pack.
public struct AquasyncServer: SyncService {
    /// Where records live.
    public let store: any SyncStore
    /// The codecs the server reads and writes; the first answers requests that name none.
    public let codecs: CodecSet
    /// Declared models by name, or `nil` to accept any model and any fields.
    public let models: [String: AquasyncModel]?
    /// The most deltas one pull answer carries; the device asks again for the rest.
    public let pageSize: Int
    /// The most deltas one pushed pack may carry (larger packs get 413).
    public let maxDeltasPerPack: Int
    /// Decides between a pushed delta and the stored version of its record
    /// made by another device; ``AquasyncNewestWins`` by default.
    ///
    /// The pushed version is `remote`, the stored one `local`, and the
    /// records are flat deltas (see ``AquasyncNewestWins``). Aquasync carries
    /// no base version, so every such meeting is a conflict. The answer:
    /// - `takeRemote` — the pushed version is stored;
    /// - `keepLocal`, `deferred` — the stored version stays, and is written
    ///   again with a new UST, so the device that pushed (which marks its
    ///   record clean once the pack is accepted) takes it on its next pull;
    /// - `merged` — the merged fields are stored as a version of
    ///   ``serverDeviceToken``, one millisecond after the later of the two, so
    ///   every device pulls it;
    /// - `keepBoth` — the pushed version is stored, and the stored one is
    ///   kept as a copy under a new gid, as a version of ``serverDeviceToken``.
    public let conflictPolicy: any ConflictPolicy
    /// The rule each pushed record must pass (``SyncCore/RecordValidation/acceptAll`` by default);
    /// it sees the record with the model's fields only (`aquasync/<Model>`, the gid as id).
    public let validation: RecordValidation

    /// The `deviceToken` of versions the server makes itself (a merge, a
    /// kept copy): no device's, so every device pulls them.
    public static let serverDeviceToken = "00000000-0000-0000-0000-000000000000"

    /// The metadata peer under which the last pack applied of each device is remembered: its `_id`, and
    /// the refusals of its answer, under the device's token.
    static let lastPacks: PeerID = "aquasync.last-packs"

    /// Makes a server.
    /// - Parameters:
    ///   - store: Where records live.
    ///   - codecs: The codecs spoken; the first is the default.
    ///   - models: Declared models, or `nil` for an open schema.
    ///   - pageSize: The most deltas in one pull answer.
    ///   - maxDeltasPerPack: The most deltas a pushed pack may carry.
    ///   - conflictPolicy: Decides between a pushed version and a stored one from another device.
    ///   - validation: The rule each pushed record must pass; a record it refuses is answered per record.
    public init(
        store: any SyncStore, codecs: CodecSet, models: [AquasyncModel]? = nil, pageSize: Int = 1_000,
        maxDeltasPerPack: Int = 10_000, conflictPolicy: any ConflictPolicy = AquasyncNewestWins(),
        validation: RecordValidation = .acceptAll
    ) {
        self.store = store
        self.codecs = codecs
        self.models = models.map { Dictionary($0.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last }) }
        self.pageSize = max(1, pageSize)
        self.maxDeltasPerPack = max(1, maxDeltasPerPack)
        self.conflictPolicy = conflictPolicy
        self.validation = validation
    }

    /// Answers a pull or a push.
    public func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        let route = request.pathWithoutQuery.dropFirst(context.mountPath.count)
        let (input, output) = try codecs.negotiate(contentType: request.contentType, accept: request.accept)
        if route.isEmpty || route == "/" {
            guard request.method == .post else { throw SyncServiceError.methodNotAllowed("use POST to push a DeltaPack") }
            let query = request.queryItems
            let condition = try PushCondition(latestUST: query["latestUST"], deviceToken: query["deviceToken"])
            return try await metrics.timing("push") {
                try await push(request.body, codec: input, answerIn: output, account: context.account, unlessChangedAfter: condition)
            }
        }
        if route.hasPrefix("/from:") {
            guard request.method == .get else { throw SyncServiceError.methodNotAllowed("use GET to pull deltas") }
            guard let ust = Int64(route.dropFirst("/from:".count)), ust >= 0 else {
                throw SyncServiceError.badRequest("the UST in /from:{ust} must be a non-negative integer")
            }
            let token = try Self.deviceToken(request.queryItems["deviceToken"])
            return try await metrics.timing("pull") {
                try await pull(after: ust, excluding: token, codec: output, account: context.account)
            }
        }
        throw SyncServiceError.notFound("no Aquasync resource at \(request.pathWithoutQuery)")
    }

    /// A query's `deviceToken`, checked.
    /// - Throws: ``SyncCore/SyncServiceError`` (400) when it is not a lowercase UUID.
    private static func deviceToken(_ text: String?) throws -> String? {
        if let text, !isLowercaseUUID(text) { throw SyncServiceError.badRequest("deviceToken must be a lowercase UUID") }
        return text
    }

    /// What a push's query asks: apply the pack only when the account has no change after the device's
    /// `latestUST`; otherwise answer what a pull from there answers, leaving out `deviceToken`'s deltas.
    private struct PushCondition {
        let latestUST: Int64
        let deviceToken: String?

        /// The condition of a push's query, or `nil` for an unconditional push (no `latestUST`).
        /// - Throws: ``SyncCore/SyncServiceError`` (400) for a `latestUST` that is not a non-negative
        ///   integer or a `deviceToken` that is not a lowercase UUID (with or without `latestUST`).
        init?(latestUST: String?, deviceToken: String?) throws {
            let token = try AquasyncServer.deviceToken(deviceToken)
            guard let latestUST else { return nil }
            guard let ust = Int64(latestUST), ust >= 0 else {
                throw SyncServiceError.badRequest("latestUST must be a non-negative integer")
            }
            (self.latestUST, self.deviceToken) = (ust, token)
        }
    }

    /// Records received and sent, conflicts and sync durations, with `stack="aquasync"`.
    private let metrics = StackMetrics(stack: "aquasync")

    // MARK: Pull

    private func pull(after ust: Int64, excluding deviceToken: String?, codec: any SyncCodec, account: AccountID)
        async throws -> SyncResponse
    {
        guard let pack = try await changes(after: ust, excluding: deviceToken, account: account) else {
            return SyncResponse(status: 204)
        }
        return SyncResponse(status: 200, contentType: codec.primaryMediaType, body: try pack.encoded(with: codec))
    }

    /// A pull's answer: the deltas written after `ust` by others than `deviceToken`, at most
    /// ``pageSize``, and where they reach; `nil` when nothing at all was written after `ust`.
    private func changes(after ust: Int64, excluding deviceToken: String?, account: AccountID)
        async throws -> StoredFieldsDocument?
    {
        let start = ChangePosition(UInt64(ust))
        var position = start
        // The deltas in their wire form, straight from the stored fields.
        var models: [String: [StoredFields]] = [:]
        var hasMore = false
        var count = 0
        var after = start
        pages: while true {
            let page = try await store.encodedChanges(for: account, after: after, in: nil, limit: pageSize)
            for stored in page.records {
                guard count < pageSize else {
                    hasMore = true
                    break pages
                }
                position = stored.position
                guard let model = StoredDelta.model(of: stored.key.collection),
                    let delta = StoredDelta.wireFields(stored, unlessMadeBy: deviceToken)
                else { continue }
                models[model, default: []].append(delta)
                count += 1
            }
            position = page.lastPosition
            guard page.hasMore else { break }
            after = page.lastPosition
        }
        if position == start { return nil }
        metrics.sent(count)
        return DeltaPack.document(models: models, latestUST: Int64(clamping: position.rawValue), hasMore: hasMore)
    }

    // MARK: Push

    private func push(
        _ body: [UInt8], codec: any SyncCodec, answerIn output: any SyncCodec, account: AccountID,
        unlessChangedAfter condition: PushCondition?
    ) async throws -> SyncResponse {
        let pack: PushedPack
        do {
            pack = try read(body, codec: codec)
        } catch let error as AquasyncValidationError {
            return try .encoded(["id": "validation_error", "message": .string(error.message)], with: output, status: 422)
        }
        guard pack.deltas.count <= maxDeltasPerPack else {
            throw SyncServiceError(
                status: 413, message: "a DeltaPack may carry at most \(maxDeltasPerPack) deltas; this one has \(pack.deltas.count)")
        }
        // A device that has pulled everything up to its latestUST pushes on that condition. When the account
        // changed since, nothing is applied: the answer is the pull the device must make first. The condition
        // is read in the transaction that writes the pack (with the pack's records and the device's last pack,
        // in one query on the SQLite and PostgreSQL stores), so no commit can come between the check and the
        // pack's. A pack sent again — a retry after a lost answer — is the device's last one (the device of the
        // pack's deltas; the smallest token, should they differ, so that a pack sent again names the same one),
        // which the server remembers: one entry per device, written over by each pack, so every write stays on
        // pages the other devices' pushes write too (docs/aquasync.md#decisions).
        let device = pack.deltas.lazy.map(\.encoded.version.node.rawValue).min()
        let (transactionOutcome, committed) = try await store.transactionWithPositions(for: account) {
            tx -> PushTransactionOutcome in
            // The pack's records and the device's last pack in one read; the loop below finds the records read.
            var lastPack: SyncValue?
            if let device {
                lastPack = try await tx.records(at: pack.deltas.map(\.key), withMetadata: device, for: Self.lastPacks).metadata
            }
            if let condition {
                var latest = try await tx.latestPosition()
                if latest == nil { latest = try await store.latestPosition(for: account) }
                if let latest, latest > ChangePosition(UInt64(condition.latestUST)) { return .changedSince(latest, condition) }
            }
            if let lastPack, lastPack["id"] == .string(pack.id) {
                return .applied(refused: Self.refusals(remembered: lastPack), conflicts: nil, applied: [])
            }
            var refused: [DeltaPack.Refusal] = []
            var applied: [RecordKey] = []
            var conflicts = 0
            for pushed in pack.deltas {
                if !validation.acceptsEverything,
                    let reason = validation.refusal(for: StoredDelta.neutral(try pushed.delta(), model: pushed.model))
                {
                    refused.append(DeltaPack.Refusal(model: pushed.model, gid: pushed.key.id.rawValue, reason: reason))
                } else {
                    if try await apply(pushed, in: tx) { conflicts += 1 }
                    applied.append(pushed.key)
                }
            }
            if let device {
                let remembered: SyncValue =
                    refused.isEmpty
                    ? ["id": .string(pack.id)] : ["id": .string(pack.id), "refused": .array(refused.map(\.value))]
                try await tx.setMetadata(remembered, device, for: Self.lastPacks)
            }
            return .applied(refused: refused, conflicts: conflicts, applied: applied)
        }
        let outcome: (refused: [DeltaPack.Refusal], conflicts: Int?, applied: [RecordKey])
        switch transactionOutcome {
        case .changedSince(let latest, let condition):
            let changes =
                try await changes(after: condition.latestUST, excluding: condition.deviceToken, account: account)
                ?? DeltaPack.document(models: [:], latestUST: Int64(clamping: latest.rawValue))
            return SyncResponse(status: 409, contentType: output.primaryMediaType, body: try changes.encoded(with: output))
        case .applied(let refused, let conflicts, let applied):
            outcome = (refused, conflicts, applied)
        }
        if let conflicts = outcome.conflicts {  // nil: a pack sent again, applied before
            metrics.received(pack.deltas.count - outcome.refused.count)
            metrics.conflicts(conflicts)
        }
        var answer: [String: SyncValue] = ["id": "success"]
        if !outcome.refused.isEmpty { answer["refused"] = .array(outcome.refused.map(\.value)) }
        // When the pack's deltas were stored as sent (no conflict made the server write a version of its own,
        // which the device must pull) and are the account's newest changes, the device may move past them.
        if outcome.conflicts == 0,
            let upload = try await store.uploadPositions(of: outcome.applied, committed: committed, for: account)
        {
            answer["ustBefore"] = .integer(Int64(clamping: upload.before.rawValue))
            answer["latestUST"] = .integer(Int64(clamping: upload.latest.rawValue))
        }
        return try .encoded(.dictionary(answer), with: output)
    }

    /// What a push's transaction did.
    private enum PushTransactionOutcome: Sendable {
        /// The push was on `condition`, and the account has a change after it (its latest at this
        /// position): nothing written.
        case changedSince(ChangePosition, PushCondition)
        /// The pack is applied, now or before (`conflicts` is `nil` for a pack sent again): the deltas
        /// refused, the conflicts found, and the records written.
        case applied(refused: [DeltaPack.Refusal], conflicts: Int?, applied: [RecordKey])
    }

    /// The refusals remembered with a device's last pack.
    private static func refusals(remembered lastPack: SyncValue?) -> [DeltaPack.Refusal] {
        guard case .array(let items)? = lastPack?["refused"] else { return [] }
        return items.compactMap(DeltaPack.Refusal.init)
    }

    /// A pushed pack: its `_id` and its deltas.
    private struct PushedPack {
        var id: String
        var deltas: [PushedDelta]
    }

    /// A pushed delta as the store keeps it; its fields are decoded only when something looks into them.
    private struct PushedDelta {
        let model: String
        /// The record that stores the delta (``StoredDelta/record(_:model:)``).
        let encoded: EncodedRecord
        /// The delta, when it was read as one.
        private let read: Delta?

        var key: RecordKey { encoded.key }

        init(model: String, delta: Delta) throws {
            (self.model, encoded, read) = (model, try EncodedRecord(StoredDelta.record(delta, model: model)), delta)
        }

        init(model: String, encoded: EncodedRecord) {
            (self.model, self.encoded, read) = (model, encoded, nil)
        }

        /// The delta, its fields decoded.
        func delta() throws -> Delta {
            try read ?? StoredDelta.delta(of: encoded.decoded())
        }
    }

    /// Reads a pushed pack. With a codec that reads records straight into the stored form (Anchorage's
    /// JSON codec) and no declared models (which may rewrite a delta's fields), each delta is read into
    /// the form the store writes, without making values of its fields; otherwise the pack is decoded
    /// and read as a ``DeltaPack``. The rules are the same either way.
    /// - Throws: The codec's error for bytes it cannot decode, or ``AquasyncValidationError`` naming
    ///   what breaks the protocol's rules.
    private func read(_ body: [UInt8], codec: any SyncCodec) throws -> PushedPack {
        if models == nil, let pack = try StoredDelta.pack(body, codec: codec, requireID: true, refusingReservedFields: true) {
            return PushedPack(id: pack.header.id ?? "", deltas: pack.deltas.map { PushedDelta(model: $0.model, encoded: $0.record) })
        }
        let pack = try validated(DeltaPack(codec.decode(body), requireID: true))
        return PushedPack(
            id: pack.id ?? "",
            deltas: try pack.models.flatMap { model, deltas in try deltas.map { try PushedDelta(model: model, delta: $0) } })
    }

    /// Stores a pushed delta, or what ``conflictPolicy`` makes of it and the stored version.
    /// - Returns: Whether it met a stored version from another device (a conflict).
    private func apply(_ pushed: PushedDelta, in tx: any StoreTransaction) async throws -> Bool {
        guard let existing = try await tx.record(pushed.key) else {
            try await tx.put(pushed.encoded)
            return false
        }
        let (delta, model) = (try pushed.delta(), pushed.model)
        let stored = try StoredDelta.delta(existing)
        if stored.deviceToken == delta.deviceToken {
            if delta.localTimestamp > stored.localTimestamp { try await tx.put(pushed.encoded) }
            return false
        }
        let conflict = Conflict(
            local: StoredDelta.record(stored, model: model), remote: StoredDelta.record(delta, model: model),
            resolvingSide: .server)
        switch await conflictPolicy.resolve(conflict) {
        case .takeRemote:
            try await tx.put(StoredDelta.record(delta, model: model))
        case .keepLocal, .deferred:
            try await tx.put(StoredDelta.record(stored, model: model))
        case .merged(let merged):
            let version = Delta(merged: merged, gid: delta.gid, deviceToken: Self.serverDeviceToken, after: stored, delta)
            try await tx.put(StoredDelta.record(version, model: model))
        case .keepBoth:
            try await tx.put(StoredDelta.record(delta, model: model))
            let copy = stored.copied(as: TimeOrderedUUID.make().uuidString.lowercased(), deviceToken: Self.serverDeviceToken)
            try await tx.put(StoredDelta.record(copy, model: model))
        }
        return true
    }

    private func validated(_ pack: DeltaPack) throws(AquasyncValidationError) -> DeltaPack {
        var pack = pack
        for (name, deltas) in pack.models {
            for (index, delta) in deltas.enumerated() {
                let path = "\(name)[\(index)]"
                if let reserved = delta.fields.keys.first(where: { $0.hasPrefix("_") }) {
                    throw AquasyncValidationError.reservedField(reserved, at: path)
                }
                guard let models else { continue }
                guard let model = models[name] else { throw AquasyncValidationError("\(name) is not a known model") }
                pack.models[name]![index] = try model.validate(delta, at: path)
            }
        }
        return pack
    }
}
