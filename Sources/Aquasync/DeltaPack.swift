public import SyncCore

/// The unit of transfer in Aquasync: deltas grouped by model.
///
/// ```json
/// {"_id": "0f8fad5b-d9cb-469f-a165-70867728950e",
///  "Contact": [{"gid": "…", "deviceToken": "…", "localTimestamp": 1700000000123,
///               "isDeleted": false, "name": "Ada"}]}
/// ```
///
/// The same shape travels in every codec. A pack a device pushes carries an
/// `_id` (a lowercase UUID) so that the server applies it once however often
/// it arrives. A pack the server answers a pull with carries `latestUST`, the
/// position the device has now seen, and `hasMore` when another page waits.
/// Model names are the other keys; they cannot start with `_` and cannot be
/// `latestUST` or `hasMore`.
public struct DeltaPack: Sendable, Hashable {
    /// The pack's id, required when pushing: a lowercase UUID.
    public var id: String?
    /// The deltas, by model name.
    public var models: [String: [Delta]]
    /// In a pull's answer: the update sequence timestamp this pack brings the device up to.
    public var latestUST: Int64?
    /// In a pull's answer: whether more changes wait after ``latestUST``.
    public var hasMore: Bool

    /// Makes a pack.
    public init(id: String? = nil, models: [String: [Delta]] = [:], latestUST: Int64? = nil, hasMore: Bool = false) {
        self.id = id
        self.models = models
        self.latestUST = latestUST
        self.hasMore = hasMore
    }

    /// Keys of a pack that are not model names.
    public static let reservedKeys: Set<String> = ["_id", "latestUST", "hasMore"]

    /// How many deltas the pack holds.
    public var count: Int { models.values.reduce(0) { $0 + $1.count } }

    /// The pack as a value, for a codec with `codecFeatures`.
    public func value(for codecFeatures: CodecFeatures = [.null]) -> SyncValue {
        Self.value(
            models: models.mapValues { deltas in deltas.map { $0.value(for: codecFeatures) } }, id: id,
            latestUST: latestUST, hasMore: hasMore)
    }

    /// A pack as a value, from deltas already in their wire form (``Delta/value(for:)``).
    static func value(models: [String: [SyncValue]], id: String? = nil, latestUST: Int64?, hasMore: Bool) -> SyncValue {
        var dictionary = models.mapValues(SyncValue.array)
        if let id { dictionary["_id"] = .string(id) }
        if let latestUST { dictionary["latestUST"] = .integer(latestUST) }
        if hasMore { dictionary["hasMore"] = .bool(true) }
        return .dictionary(dictionary)
    }

    /// A pack as a document of records' stored fields — a pull's answer (``StoredDelta/wireFields(_:unlessMadeBy:)``)
    /// or a device's push — which encodes as ``value(models:id:latestUST:hasMore:)`` of the same deltas does.
    static func document(
        models: [String: [StoredFields]], id: String? = nil, latestUST: Int64? = nil, hasMore: Bool = false
    ) -> StoredFieldsDocument {
        var values: [String: SyncValue] = [:]
        if let id { values["_id"] = .string(id) }
        if let latestUST { values["latestUST"] = .integer(latestUST) }
        if hasMore { values["hasMore"] = .bool(true) }
        return StoredFieldsDocument(values: values, storedArrays: models)
    }

    /// Reads a pack.
    ///
    /// Each delta's fields are taken from `value` without a copy when nothing else holds `value`.
    /// - Parameter requireID: whether `_id` must be present (it must in what a device pushes).
    /// - Throws: ``AquasyncValidationError`` naming the first thing that is wrong.
    public init(_ value: consuming SyncValue, requireID: Bool) throws(AquasyncValidationError) {
        guard case .dictionary(var dictionary) = consume value else {
            throw AquasyncValidationError("a DeltaPack is a dictionary of models")
        }
        (id, latestUST, hasMore) = try Self.header(dictionary, requireID: requireID)
        models = [:]
        // The names first: iterating the dictionary itself would keep it shared while entries leave it.
        for model in dictionary.keys.filter({ !Self.reservedKeys.contains($0) }) {
            try Self.requireModelName(model)
            // Taken out of the pack, and each item out of the array, so that a delta owns its dictionary.
            guard case .array(var items) = dictionary.removeValue(forKey: model) else {
                throw AquasyncValidationError("\(model) must be an array of deltas")
            }
            var deltas: [Delta] = []
            deltas.reserveCapacity(items.count)
            for index in items.indices {
                let item = items[index]
                items[index] = .null
                deltas.append(try Delta(item, at: "\(model)[\(index)]"))
            }
            models[model] = deltas
        }
    }

    /// The pack's `_id`, `latestUST` and `hasMore`, read from its `entries` (its models may be among them).
    /// - Throws: ``AquasyncValidationError`` naming the first that is wrong.
    static func header(
        _ entries: [String: SyncValue], requireID: Bool
    ) throws(AquasyncValidationError) -> (id: String?, latestUST: Int64?, hasMore: Bool) {
        let id: String?
        switch entries["_id"] {
        case .string(let text)? where isLowercaseUUID(text): id = text
        case nil where !requireID: id = nil
        case nil: throw AquasyncValidationError("_id is missing: a pushed DeltaPack needs a lowercase UUID as its _id")
        default: throw AquasyncValidationError("_id must be a lowercase UUID")
        }
        let latestUST: Int64?
        switch entries["latestUST"] {
        case .integer(let ust)?: latestUST = ust
        case nil: latestUST = nil
        default: throw AquasyncValidationError("latestUST must be an integer")
        }
        switch entries["hasMore"] {
        case .bool(let flag)?: return (id, latestUST, flag)
        case nil: return (id, latestUST, false)
        default: throw AquasyncValidationError("hasMore must be a Boolean")
        }
    }

    /// Throws unless `name` can name a model (``isValidModelName(_:)``).
    static func requireModelName(_ name: String) throws(AquasyncValidationError) {
        guard isValidModelName(name) else {
            throw AquasyncValidationError("\"\(name)\" is not a model name: letters, digits, '.', '-' and '_', not first '_'")
        }
    }

    /// Whether `name` can name a model: 1–128 of letters, digits, `.`, `-`, `_`, not starting with `_`.
    public static func isValidModelName(_ name: String) -> Bool {
        guard (1...128).contains(name.utf8.count), name.utf8.first != UInt8(ascii: "_"),
            !reservedKeys.contains(name)
        else { return false }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
    }
}

extension DeltaPack {
    /// A delta of a pushed pack that the server refused for good (HTTP 422
    /// semantics for one record) and did not store, while the rest of the
    /// pack went through. The push's answer lists them under `refused`:
    ///
    /// ```json
    /// {"id": "success",
    ///  "refused": [{"model": "Note", "gid": "6f1c8a3e-…", "reason": "a note needs a title"}]}
    /// ```
    ///
    /// A client that does not know `refused` reads the answer as before.
    public struct Refusal: Sendable, Hashable {
        /// The delta's model.
        public var model: String
        /// The delta's gid.
        public var gid: String
        /// Why the server refused it.
        public var reason: String

        /// Makes a refusal.
        public init(model: String, gid: String, reason: String) {
            self.model = model
            self.gid = gid
            self.reason = reason
        }

        /// Reads a refusal from its wire form, or `nil` when `value` is not one.
        public init?(_ value: SyncValue) {
            guard case .string(let model)? = value["model"], case .string(let gid)? = value["gid"] else { return nil }
            self.init(model: model, gid: gid, reason: value["reason"]?.stringValue ?? "refused by the server")
        }

        /// The refusal's wire form.
        public var value: SyncValue {
            ["model": .string(model), "gid": .string(gid), "reason": .string(reason)]
        }
    }

    /// The refusals a push's answer carries, by the refused record's store key.
    static func refusals(in answer: SyncValue) -> [RecordKey: String] {
        guard case .array(let items)? = answer["refused"] else { return [:] }
        var refusals: [RecordKey: String] = [:]
        for refusal in items.compactMap(Refusal.init) {
            refusals[StoredDelta.key(refusal.model, refusal.gid)] = refusal.reason
        }
        return refusals
    }
}
