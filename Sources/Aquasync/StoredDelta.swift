#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// How Aquasync keeps a delta in a ``SyncStore``: one record per `gid` in the
/// collection `aquasync/<Model>`, whose fields are the delta's flat wire form
/// (sync columns included, so `localTimestamp` stays exact in every store).
enum StoredDelta {
    /// The prefix of every Aquasync collection, keeping its records apart from other stacks' in one account.
    static let collectionPrefix = "aquasync/"

    /// The collection holding `model`'s records.
    static func collection(for model: String) -> CollectionID {
        CollectionID(collectionPrefix + model)
    }

    /// The model a collection holds, or `nil` when the collection is not Aquasync's.
    static func model(of collection: CollectionID) -> String? {
        guard collection.rawValue.hasPrefix(collectionPrefix) else { return nil }
        return String(collection.rawValue.dropFirst(collectionPrefix.count))
    }

    /// The store key of `gid` in `model`.
    static func key(_ model: String, _ gid: String) -> RecordKey {
        RecordKey(collection: collection(for: model), id: RecordID(gid))
    }

    /// The record that stores `delta`.
    static func record(_ delta: Delta, model: String) -> SyncRecord {
        var stored = delta
        stored.ust = nil
        return SyncRecord(
            collection: collection(for: model), id: RecordID(delta.gid), fields: stored.value().dictionaryValue ?? [:],
            isDeleted: delta.isDeleted, version: version(of: delta))
    }

    /// The delta a stored record holds, with `ust` set to its position. The
    /// `isDirty` column an earlier version of the library kept is left out.
    /// - Throws: ``StoreError`` with ``StoreError/Code/corrupt`` when the record is not a stored delta.
    static func delta(_ stored: StoredRecord) throws -> Delta {
        var delta = try delta(of: stored.record)
        delta.ust = Int64(clamping: stored.position.rawValue)
        return delta
    }

    /// The delta `record` holds, without `ust`; the `isDirty` column of earlier versions is left out.
    /// - Throws: ``StoreError`` with ``StoreError/Code/corrupt`` when the record is not a stored delta.
    static func delta(of record: SyncRecord) throws -> Delta {
        var fields = record.fields
        fields.removeValue(forKey: AquasyncLocalRecords.legacyDirtyColumn)
        do {
            return try Delta(.dictionary(fields), at: record.key.description)
        } catch {
            throw StoreError(.corrupt, "\(record.key) is not an Aquasync record: \(error)")
        }
    }

    /// The delta a stored record holds as a pull's answer writes it (``Delta/value(for:)``'s
    /// form), left in the stored form: its fields without the `isDirty` column of earlier versions, with
    /// `ust` set to its position; `nil` when `deviceToken` made it. The device that made a version is
    /// read from the record's version, which ``record(_:model:)`` makes of the delta's `deviceToken`.
    static func wireFields(_ stored: EncodedStoredRecord, unlessMadeBy deviceToken: String?) -> StoredFields? {
        guard stored.version.node.rawValue != deviceToken else { return nil }
        return StoredFields(
            stored.fields, omitting: [AquasyncLocalRecords.legacyDirtyColumn],
            adding: ["ust": .integer(Int64(clamping: stored.position.rawValue))])
    }

    /// The sync columns read from a delta in the stored form, in this order.
    private static let columnsRead = ["gid", "deviceToken", "localTimestamp", "isDeleted", "ust"]

    /// The stored form of the delta `blob` holds — a dictionary a codec read into the stored form
    /// (``SyncCore/StoredFieldsDecoding``), such as a pulled or a pushed delta — and the first of its field
    /// names that starts with `_`, if any. When its columns are plain, the record is the blob without
    /// `ust`, its fields never decoded; otherwise (an `isDeleted` of 0 or 1, a `ust` of another type, a
    /// bad column) it is that of the ``Delta`` the blob reads as, which applies the protocol's rules.
    /// - Throws: ``AquasyncValidationError`` naming what is wrong with the delta at `path`.
    static func encoded(
        _ blob: [UInt8], model: String, at path: @autoclosure () -> String
    ) throws -> (record: EncodedRecord, reservedField: String?) {
        let (columns, fields, reserved) = try StoredValueFormat.readFields(
            columnsRead, removing: ["ust"], from: blob, noting: { $0.hasPrefix("_") })
        if case .string(let gid)? = columns[0], isLowercaseUUID(gid), case .string(let deviceToken)? = columns[1],
            isLowercaseUUID(deviceToken), case .integer(let localTimestamp)? = columns[2], case .bool(let isDeleted)? = columns[3]
        {
            switch columns[4] {
            case nil, .integer?, .null?:
                let record = EncodedRecord(
                    key: key(model, gid), isDeleted: isDeleted,
                    version: version(localTimestamp: localTimestamp, deviceToken: deviceToken), fields: fields)
                return (record, reserved)
            default: break
            }
        }
        let delta = try Delta(.dictionary(StoredValueFormat.decodeFields(Data(blob))), at: path())
        return (try EncodedRecord(record(delta, model: model)), reserved)
    }

    /// The header and deltas of a pack a codec read into the stored form (``SyncCore/StoredFieldsDecoding``),
    /// each delta as ``encoded(_:model:at:)`` reads it, model after model; `nil` when `bytes` are not
    /// such a pack for `codec` (the pack is then read as values, which names what is wrong with it).
    /// With `refusingReservedFields`, a field name that starts with `_` is refused (a server's rule).
    /// - Throws: ``AquasyncValidationError`` naming what breaks the protocol's rules.
    static func pack(
        _ bytes: [UInt8], codec: any SyncCodec, requireID: Bool, refusingReservedFields: Bool
    ) throws -> (header: (id: String?, latestUST: Int64?, hasMore: Bool), deltas: [(model: String, record: EncodedRecord)])? {
        guard let reader = codec as? any StoredFieldsDecoding,
            let document = reader.decodeStoredArrays(bytes, where: { !DeltaPack.reservedKeys.contains($0) })
        else { return nil }
        let header = try DeltaPack.header(document.values, requireID: requireID)
        var deltas: [(model: String, record: EncodedRecord)] = []
        deltas.reserveCapacity(document.storedArrays.values.reduce(0) { $0 + $1.count })
        for (model, blobs) in document.storedArrays {
            try DeltaPack.requireModelName(model)
            for (index, blob) in blobs.enumerated() {
                let (record, reserved) = try encoded(blob, model: model, at: "\(model)[\(index)]")
                if refusingReservedFields, let reserved {
                    throw AquasyncValidationError.reservedField(reserved, at: "\(model)[\(index)]")
                }
                deltas.append((model, record))
            }
        }
        return (header, deltas)
    }

    // MARK: The journal's form

    /// The fields of a stored delta that are not the model's: a journal entry that names its record
    /// (``SyncCore/SyncJournal/recordLocalChange(_:writtenAs:without:at:basedOn:)``) leaves them out, which
    /// gives ``neutral(_:model:)`` of a version that ``record(_:model:)`` stored (a deletion has no fields).
    static let columns: Set<String> = Delta.syncColumns.union([AquasyncLocalRecords.legacyDirtyColumn])

    /// `delta` as the journal keeps it: the store key, the model's own fields
    /// only, and a version made of `localTimestamp` and `deviceToken`.
    static func neutral(_ delta: Delta, model: String) -> SyncRecord {
        SyncRecord(
            collection: collection(for: model), id: RecordID(delta.gid), fields: delta.isDeleted ? [:] : delta.fields,
            isDeleted: delta.isDeleted, version: version(of: delta))
    }

    /// `delta` as a version the server holds; its token is the version's
    /// identity, `deviceToken@localTimestamp`.
    static func serverVersion(_ delta: Delta, model: String) -> ServerVersion {
        ServerVersion(record: neutral(delta, model: model), token: .string("\(delta.deviceToken)@\(delta.localTimestamp)"))
    }

    /// The delta a server version holds (``serverVersion(_:model:)``'s inverse).
    static func delta(_ version: ServerVersion) -> Delta {
        var deviceToken = version.record.version.node.rawValue
        var localTimestamp = Delta.milliseconds(version.record.version.modifiedAt)
        if case .string(let token)? = version.token, let at = token.lastIndex(of: "@"),
            let milliseconds = Int64(token[token.index(after: at)...])
        {
            deviceToken = String(token[..<at])
            localTimestamp = milliseconds
        }
        return Delta(
            gid: version.record.id.rawValue, deviceToken: deviceToken, localTimestamp: localTimestamp,
            isDeleted: version.record.isDeleted, fields: version.record.fields)
    }

    private static func version(of delta: Delta) -> RecordVersion {
        version(localTimestamp: delta.localTimestamp, deviceToken: delta.deviceToken)
    }

    /// The record version of a delta made by `deviceToken` at `localTimestamp`.
    static func version(localTimestamp: Int64, deviceToken: String) -> RecordVersion {
        RecordVersion(modifiedAt: Date(timeIntervalSince1970: Double(localTimestamp) / 1000), node: PeerID(deviceToken))
    }
}

extension Delta {
    /// The version a policy's merged record stands for: its fields without
    /// sync columns, made by `deviceToken` one millisecond after the later of
    /// `versions`, so it replaces both on every node.
    init(merged: SyncRecord, gid: String, deviceToken: String, after versions: Delta...) {
        let latest = versions.map(\.localTimestamp).max() ?? 0
        self.init(
            gid: gid, deviceToken: deviceToken, localTimestamp: Self.timestamp(after: latest),
            isDeleted: merged.isDeleted,
            fields: merged.isDeleted ? [:] : merged.fields.filter { !Self.isColumn($0.key) })
    }

    /// Whether `field` is a sync column, the local `isDirty` of earlier versions, or reserved (`_…`): not a model's field.
    private static func isColumn(_ field: String) -> Bool {
        syncColumns.contains(field) || field == AquasyncLocalRecords.legacyDirtyColumn || field.hasPrefix("_")
    }

    /// This version under another gid and device token, as a copy a policy asked to keep.
    func copied(as gid: String, deviceToken: String) -> Delta {
        var copy = self
        copy.gid = gid
        copy.deviceToken = deviceToken
        copy.ust = nil
        return copy
    }
}
