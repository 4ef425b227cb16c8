#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// A page of a pull's answer: where it brings the device, read as soon as it arrives so that the
/// next page can be asked for, and its deltas, each read into the form the store keeps it.
///
/// With a codec that reads records straight into the stored form (``SyncCore/StoredFieldsDecoding``:
/// Anchorage's JSON codec), only `latestUST` and `hasMore` are read when the page arrives; the deltas
/// are read by ``versions(with:)`` while the next page is on its way, and their fields never become
/// ``SyncCore/SyncValue``s: a delta's sync columns are read from the stored form, `ust` is dropped,
/// and the rest is what the store writes. A delta whose columns are not in their plain form (an
/// `isDeleted` of 0 or 1, say) is read as a ``Delta``, which applies the protocol's rules and names
/// what is wrong; so is every delta of another codec, whose pages are read whole when they arrive.
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

    /// The update sequence timestamp the page brings the device up to.
    let latestUST: Int64
    /// Whether another page follows.
    let hasMore: Bool
    /// The page's deltas, read, or the bytes to read them from.
    private let content: Content

    private enum Content: Sendable {
        case read([Version])
        case unread([UInt8])
    }

    /// The entries of a page that say where it ends.
    private static let header: Set<String> = ["_id", "latestUST", "hasMore"]

    /// Reads where a pull's answer, `bytes` in `codec`, ends: only that, when the codec can read the
    /// deltas into the stored form later, or the whole page.
    /// - Parameter missingLatestUST: The error for an answer without `latestUST`.
    /// - Throws: The codec's error for bytes it cannot decode, ``AquasyncValidationError`` for a pack
    ///   that breaks the protocol's rules, or `missingLatestUST`.
    init(_ bytes: [UInt8], codec: any SyncCodec, missingLatestUST: @autoclosure () -> any Error) throws {
        if let reader = codec as? any StoredFieldsDecoding, let entries = reader.decodeEntries(bytes, named: Self.header) {
            let header = try DeltaPack.header(entries, requireID: false)
            guard let latestUST = header.latestUST else { throw missingLatestUST() }
            (self.latestUST, hasMore, content) = (latestUST, header.hasMore, .unread(bytes))
        } else {
            let (latestUST, hasMore, versions) = try Self.read(codec.decode(bytes))
            guard let latestUST else { throw missingLatestUST() }
            (self.latestUST, self.hasMore, content) = (latestUST, hasMore, .read(versions))
        }
    }

    /// The page's versions, model by model, read with `codec` (the one the page came in).
    /// - Throws: The codec's error for bytes it cannot decode, or ``AquasyncValidationError`` for a
    ///   pack that breaks the protocol's rules.
    func versions(with codec: any SyncCodec) throws -> [Version] {
        let bytes: [UInt8]
        switch content {
        case .read(let versions): return versions
        case .unread(let unread): bytes = unread
        }
        let (latestUST, hasMore, versions): (Int64?, Bool, [Version])
        if let pack = try StoredDelta.pack(bytes, codec: codec, requireID: false, refusingReservedFields: false) {
            let read = pack.deltas.map { Version(model: $0.model, encoded: $0.record) }
            (latestUST, hasMore, versions) = (pack.header.latestUST, pack.header.hasMore, read)
        } else {
            (latestUST, hasMore, versions) = try Self.read(codec.decode(bytes))
        }
        guard latestUST == self.latestUST, hasMore == self.hasMore else {
            throw AquasyncValidationError("the page's latestUST and hasMore read differently when the whole page was read")
        }
        return versions
    }

    /// A pack's `latestUST`, `hasMore` and versions, read from its value.
    private static func read(_ value: consuming SyncValue) throws -> (latestUST: Int64?, hasMore: Bool, versions: [Version]) {
        let pack = try DeltaPack(value, requireID: false)
        var versions: [Version] = []
        versions.reserveCapacity(pack.count)
        for (model, deltas) in pack.models {
            for delta in deltas { versions.append(Version(model: model, encoded: try EncodedRecord(StoredDelta.record(delta, model: model)))) }
        }
        return (pack.latestUST, pack.hasMore, versions)
    }
}
