public import SyncCore

/// The appSync server: `GET /rest/{type}/list/{servercounter}` and `POST /rest/{type}/update`.
///
/// ```swift
/// let server = AppSyncServer(store: store, codecs: codecs, types: [AppSyncObjectType("booking")])
/// let router = ServiceRouter().mounting(server, at: "/rest")
/// ```
///
/// The server counter is the store's change position: it grows with every
/// applied change — those that arrive by sync too — and the objects an
/// upload applies take positions after everything before them. The server
/// does not resolve conflicts (clients do, while downloading); it accepts the
/// uploaded version, except that it refuses an object whose primary key a
/// different live object holds (status 409, a conflict: the client keeps the
/// change) and an object its ``validation`` refuses (status 422, refused for
/// good: the client drops the change), and it skips an object identical to
/// the one it has, so that nothing travels for no reason.
///
/// Answers follow the seed: `{"objects": [...], "result": {"statuscode": "OK",
/// "servercounter": N}}` for a list (with `"more": true` when a page limit
/// cut it), `{"result": {"statuscode": "OK" | "NOK", "servercounter": N,
/// "servercounter_before": B, "rejected": [{"guid", "reason", "status"}]}}`
/// for an update. `servercounter_before` is present only when the applied objects
/// took the positions right after B; a client whose last download ended at B
/// then knows it missed nothing.
public struct AppSyncServer: SyncService {
    /// Where objects live.
    public let store: any SyncStore
    /// The codecs spoken; the first (JSON, usually) answers requests that name none.
    public let codecs: CodecSet
    /// The registered object types by name.
    public let types: [String: AppSyncObjectType]
    /// The most objects one list answer carries.
    public let pageSize: Int
    /// The most objects one update may carry.
    public let maxObjectsPerUpdate: Int
    /// The rule uploaded objects must pass; one it refuses is answered with
    /// status 422 in `rejected` and not stored, and the rest of the update is applied.
    public let validation: RecordValidation

    /// Makes a server.
    /// - Parameters:
    ///   - store: Where objects live.
    ///   - codecs: The codecs spoken.
    ///   - types: The registered object types.
    ///   - pageSize: The most objects one list answer carries.
    ///   - maxObjectsPerUpdate: The most objects one update may carry.
    ///   - validation: The rule uploaded objects must pass (every object by default).
    public init(
        store: any SyncStore, codecs: CodecSet, types: [AppSyncObjectType], pageSize: Int = 1_000,
        maxObjectsPerUpdate: Int = 10_000, validation: RecordValidation = .acceptAll
    ) {
        self.validation = validation
        self.store = store
        self.codecs = codecs
        self.types = Dictionary(types.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        self.pageSize = max(1, pageSize)
        self.maxObjectsPerUpdate = max(1, maxObjectsPerUpdate)
    }

    /// Answers a list or an update.
    public func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        let parts = request.pathWithoutQuery.dropFirst(context.mountPath.count).split(separator: "/")
        let (input, output) = try codecs.negotiate(contentType: request.contentType, accept: request.accept)
        guard parts.count >= 2 else { throw SyncServiceError.notFound("use /rest/{type}/list/{servercounter} or /rest/{type}/update") }
        guard let type = types[String(parts[0])] else {
            throw SyncServiceError.notFound("unknown object type '\(parts[0])'; known: \(types.keys.sorted().joined(separator: ", "))")
        }
        switch (parts[1], parts.count, request.method) {
        case ("list", 3, .get):
            guard let counter = UInt64(parts[2]) else {
                throw SyncServiceError.badRequest("the server counter in /list/{servercounter} must be a non-negative integer")
            }
            return try await metrics.timing("list") {
                try await list(type, after: ChangePosition(counter), codec: output, account: context.account)
            }
        case ("update", 2, .post):
            let value = try input.decode(request.body)
            return try await metrics.timing("update") { try await update(type, value, codec: output, account: context.account) }
        case ("list", 3, _), ("update", 2, _):
            throw SyncServiceError.methodNotAllowed("list is GET, update is POST")
        default:
            throw SyncServiceError.notFound("no appSync resource at \(request.pathWithoutQuery)")
        }
    }

    /// Applies `object` as a change made on the server itself (an edit in a back office, say).
    /// - Throws: ``SyncCore/SyncServiceError``: 404 for a type the server does not know, 409 when
    ///   another live object holds its primary key, 422 when the ``validation`` refuses it.
    public func save(_ object: AppSyncObject, type name: String, account: AccountID) async throws {
        guard let type = types[name] else { throw SyncServiceError.notFound("unknown object type '\(name)'") }
        let rejected = try await store.transaction(for: account) { tx in
            try await apply([object], type: type, in: tx).rejected
        }
        if let rejection = rejected.first { throw SyncServiceError(status: rejection.status, message: rejection.reason) }
    }

    /// Records received and sent, conflicts and sync durations, with `stack="appsync"`.
    private let metrics = StackMetrics(stack: "appsync")

    // MARK: List

    private func list(_ type: AppSyncObjectType, after counter: ChangePosition, codec: any SyncCodec, account: AccountID)
        async throws -> SyncResponse
    {
        let latest = try await store.latestPosition(for: account)
        let batch = try await store.changes(
            for: account, after: counter, in: [StoredObject.collection(type.name)], limit: pageSize)
        let objects = try batch.records.map { try StoredObject.object($0.record).value(for: codec.features) }
        metrics.sent(objects.count)
        var result: [String: SyncValue] = ["statuscode": "OK"]
        if batch.hasMore {
            result["servercounter"] = .integer(Int64(clamping: batch.lastPosition.rawValue))
            result["more"] = true
        } else {
            result["servercounter"] = .integer(Int64(clamping: max(latest, batch.lastPosition, counter).rawValue))
        }
        return try .encoded(["objects": .array(objects), "result": .dictionary(result)], with: codec)
    }

    // MARK: Update

    private func update(_ type: AppSyncObjectType, _ value: SyncValue, codec: any SyncCodec, account: AccountID)
        async throws -> SyncResponse
    {
        guard case .array(let items)? = value["objects"] else {
            throw SyncServiceError.badRequest("the body must be {\"objects\": [...]}")
        }
        guard items.count <= maxObjectsPerUpdate else {
            throw SyncServiceError(status: 413, message: "an update may carry at most \(maxObjectsPerUpdate) objects")
        }
        var objects: [AppSyncObject] = []
        for (index, item) in items.enumerated() {
            // An object that does not read, or uses a protocol field, is answered 400.
            let object = try AppSyncObject(item, at: "objects[\(index)]")
            if let reserved = object.fields.keys.first(where: { AppSyncObject.protocolFields.contains($0) }) {
                throw SyncServiceError.badRequest("objects[\(index)].\(reserved) is a protocol field")
            }
            objects.append(object)
        }
        let valid = objects
        let (outcome, committed) = try await store.transactionWithPositions(for: account) { tx in
            try await apply(valid, type: type, in: tx)
        }
        metrics.received(valid.count)
        metrics.conflicts(outcome.rejected.count { $0.status == AppSyncServer.conflictStatus })
        let upload = try await store.uploadPositions(of: outcome.applied, committed: committed, for: account)
        let latest: ChangePosition
        if let upload { latest = upload.latest } else { latest = try await store.latestPosition(for: account) }
        var result: [String: SyncValue] = [
            "statuscode": outcome.rejected.isEmpty ? "OK" : "NOK",
            "servercounter": .integer(Int64(clamping: latest.rawValue)),
        ]
        if let before = upload?.before {
            result["servercounter_before"] = .integer(Int64(clamping: before.rawValue))
        }
        if !outcome.rejected.isEmpty {
            result["rejected"] = .array(
                outcome.rejected.map {
                    ["guid": .string($0.guid), "reason": .string($0.reason), "status": .integer(Int64($0.status))]
                })
        }
        return try .encoded(["result": .dictionary(result)], with: codec)
    }

    /// The status of a rejection for a primary key another object holds: a conflict, the client keeps its change.
    static let conflictStatus = 409
    /// The status of a rejection by the ``validation``: refused for good, the client drops its change.
    static let refusalStatus = 422

    struct Outcome: Sendable {
        var applied: [RecordKey] = []
        var rejected: [(guid: String, reason: String, status: Int)] = []
    }

    private func apply(_ objects: [AppSyncObject], type: AppSyncObjectType, in tx: any StoreTransaction) async throws
        -> Outcome
    {
        var outcome = Outcome()
        try await tx.prefetch(objects.map { StoredObject.key(type.name, $0.guid) })
        for object in objects {
            let key = StoredObject.key(type.name, object.guid)
            let existing = try await tx.record(key).map { try StoredObject.object($0.record) }
            if existing == object { continue }
            if let reason = validation.refusal(for: StoredObject.neutral(object, type: type.name, node: StoredObject.clientNode)) {
                outcome.rejected.append((object.guid, reason, Self.refusalStatus))
                continue
            }
            if !object.isDeleted, let primaryKey = type.primaryKeyValue(of: object),
                let owner = try await StoredObject.owner(of: primaryKey, type: type.name, in: tx), owner != object.guid
            {
                outcome.rejected.append(
                    (object.guid, "primary key conflict: object \(owner) has the same primary key", Self.conflictStatus))
                continue
            }
            try await StoredObject.put(object, replacing: existing, type: type, in: tx)
            outcome.applied.append(key)
        }
        return outcome
    }
}
