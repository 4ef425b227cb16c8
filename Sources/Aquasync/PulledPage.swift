import FoundationEssentials
import SyncCore

/// A page of a pull's answer read for applying: the deltas, each already in the form the store keeps
/// it, and where the page brings the device.
///
/// With a codec that reads records straight into the stored form (``SyncCore/StoredFieldsDecoding``:
/// Anchorage's JSON codec), a delta's fields never become ``SyncCore/SyncValue``s: its sync columns
/// are read from the stored form, `ust` is dropped, and the rest is what the store writes. A delta
/// whose columns are not in their plain form (an `isDeleted` of 0 or 1, say) is read as a ``Delta``,
/// which applies the protocol's rules and names what is wrong; so is every delta of another codec.
struct PulledPage: Sendable {
    /// One pulled version of a record.
    struct Version: Sendable {
        /// The record's model.
        let model: String
        /// The version as the store keeps it (``StoredDelta/record(_:model:)``).
        let encoded: EncodedRecord

        /// The version as a delta, its fields decoded: for a record with a local change.
        /// - Throws: ``SyncCore/StoreError`` when the fields cannot be read as a delta.
        func delta() throws -> Delta {
            try StoredDelta.delta(of: encoded.decoded())
        }
    }

    /// The versions, model by model, in the order of the answer.
    var versions: [Version]
    /// The update sequence timestamp the page brings the device up to.
    let latestUST: Int64
    /// Whether another page follows.
    let hasMore: Bool

    /// The sync columns read from a stored delta, in this order.
    private static let columns = ["gid", "deviceToken", "localTimestamp", "isDeleted", "ust"]

    /// Reads a pull's answer, `bytes` in `codec`.
    /// - Parameter missingLatestUST: The error for an answer without `latestUST`.
    /// - Throws: The codec's error for bytes it cannot decode, ``AquasyncValidationError`` for a pack
    ///   that breaks the protocol's rules, or `missingLatestUST`.
    init(_ bytes: [UInt8], codec: any SyncCodec, missingLatestUST: @autoclosure () -> any Error) throws {
        let isModel = { (key: String) in !DeltaPack.reservedKeys.contains(key) }
        if let reader = codec as? any StoredFieldsDecoding, let document = reader.decodeStoredArrays(bytes, where: isModel) {
            let header = try DeltaPack.header(document.values, requireID: false)
            guard let latestUST = header.latestUST else { throw missingLatestUST() }
            var versions: [Version] = []
            versions.reserveCapacity(document.storedArrays.values.reduce(0) { $0 + $1.count })
            for (model, blobs) in document.storedArrays {
                try DeltaPack.requireModelName(model)
                for (index, blob) in blobs.enumerated() {
                    versions.append(Version(model: model, encoded: try Self.encoded(blob, model: model, at: "\(model)[\(index)]")))
                }
            }
            self.init(versions: versions, latestUST: latestUST, hasMore: header.hasMore)
        } else {
            let pack = try DeltaPack(codec.decode(bytes), requireID: false)
            guard let latestUST = pack.latestUST else { throw missingLatestUST() }
            var versions: [Version] = []
            versions.reserveCapacity(pack.count)
            for (model, deltas) in pack.models {
                for delta in deltas { versions.append(Version(model: model, encoded: try EncodedRecord(StoredDelta.record(delta, model: model)))) }
            }
            self.init(versions: versions, latestUST: latestUST, hasMore: pack.hasMore)
        }
    }

    private init(versions: [Version], latestUST: Int64, hasMore: Bool) {
        self.versions = versions
        self.latestUST = latestUST
        self.hasMore = hasMore
    }

    /// The stored form of the delta `blob` holds (a dictionary read into the stored form): the blob
    /// without `ust` when its columns are plain, else that of the delta it reads as.
    private static func encoded(_ blob: [UInt8], model: String, at path: @autoclosure () -> String) throws -> EncodedRecord {
        let (columns, fields) = try StoredValueFormat.readFields(Self.columns, removing: ["ust"], from: blob)
        if case .string(let gid)? = columns[0], isLowercaseUUID(gid), case .string(let deviceToken)? = columns[1],
            isLowercaseUUID(deviceToken), case .integer(let localTimestamp)? = columns[2], case .bool(let isDeleted)? = columns[3]
        {
            switch columns[4] {
            case nil, .integer?, .null?:
                return EncodedRecord(
                    key: StoredDelta.key(model, gid), isDeleted: isDeleted,
                    version: StoredDelta.version(localTimestamp: localTimestamp, deviceToken: deviceToken), fields: fields)
            default: break
            }
        }
        let delta = try Delta(.dictionary(StoredValueFormat.decodeFields(Data(blob))), at: path())
        return try EncodedRecord(StoredDelta.record(delta, model: model))
    }
}
