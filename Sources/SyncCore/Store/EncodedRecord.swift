#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// A record with its fields already encoded in the form the SQLite and PostgreSQL stores keep them,
/// for ``StoreTransaction/put(_:)-(EncodedRecord)``.
///
/// Encoding a record's fields is most of the work of writing it. A transaction holds its account's
/// lock from its first read to its commit, so a writer of many records — an import, a pulled page —
/// encodes them before it opens the transaction (while the store commits the batch before, say) and
/// the transaction only files them:
///
/// ```swift
/// let ready = try records.map(EncodedRecord.init)   // outside the transaction
/// try await store.transaction(for: account) { tx in
///     for record in ready { try await tx.put(record) }
/// }
/// ```
///
/// A store that keeps records in another form (``MemoryStore``) writes ``decoded()`` as ``StoreTransaction/put(_:)-(SyncRecord)`` does.
///
/// A codec that reads records straight into the stored form (Anchorage's JSON codec, for a pulled
/// page) makes encoded records whose fields were never values: their fields are decoded only when
/// something reads them back, such as a transaction that finds a conflict.
public struct EncodedRecord: Sendable {
    /// The record's collection and id.
    public let key: RecordKey
    /// Whether the record is a tombstone.
    public let isDeleted: Bool
    /// The record's version.
    public let version: RecordVersion
    /// The record's fields in the stored form.
    package let fields: Data
    /// The fields it was made from, when it was made from a record: reading them back costs nothing.
    private let givenFields: [String: SyncValue]?

    /// Encodes `record`'s fields.
    /// - Throws: ``StoreError/Code/invalidArgument`` when a field nests too deep to be stored.
    public init(_ record: SyncRecord) throws {
        self.key = record.key
        self.isDeleted = record.isDeleted
        self.version = record.version
        self.fields = try StoredValueFormat.encode(fields: record.fields)
        self.givenFields = record.fields
    }

    /// A record whose fields are already in the stored form: `fields` must be a well-formed fields blob
    /// (``StoredValueFormat``), as a codec that reads into that form makes it.
    package init(key: RecordKey, isDeleted: Bool, version: RecordVersion, fields: Data) {
        self.key = key
        self.isDeleted = isDeleted
        self.version = version
        self.fields = fields
        self.givenFields = nil
    }

    /// The record, its fields decoded from the stored form unless it was made from a record.
    /// - Throws: ``StoreError/Code/corrupt`` when the stored fields cannot be read.
    public func decoded() throws -> SyncRecord {
        SyncRecord(
            collection: key.collection, id: key.id, fields: try givenFields ?? StoredValueFormat.decodeFields(fields),
            isDeleted: isDeleted, version: version)
    }
}

/// A stored record read with its fields left in the form the store keeps them: what
/// ``SyncStore/encodedChanges(for:after:in:limit:)`` returns, so that a codec that can write that form
/// (Anchorage's JSON codec) answers a pull without decoding each record's fields into values first.
public struct EncodedStoredRecord: Sendable {
    /// The record's collection and id.
    public let key: RecordKey
    /// Whether the record is a tombstone.
    public let isDeleted: Bool
    /// The record's version.
    public let version: RecordVersion
    /// The position of the write that produced this version.
    public let position: ChangePosition
    /// The record's fields in the stored form.
    package let fields: Data

    /// Makes an encoded stored record from the columns a store read.
    package init(key: RecordKey, isDeleted: Bool, version: RecordVersion, position: ChangePosition, fields: Data) {
        self.key = key
        self.isDeleted = isDeleted
        self.version = version
        self.position = position
        self.fields = fields
    }

    /// A record a transaction has written and not yet committed, at `position`: the position of the
    /// version it replaces, as ``StoreTransaction/records(at:)`` answers for it.
    package init(_ written: EncodedRecord, position: ChangePosition) {
        self.init(key: written.key, isDeleted: written.isDeleted, version: written.version, position: position, fields: written.fields)
    }

    /// Encodes a stored record's fields.
    /// - Throws: ``StoreError/Code/invalidArgument`` when a field nests too deep to be stored.
    public init(_ stored: StoredRecord) throws {
        self.init(
            key: stored.record.key, isDeleted: stored.record.isDeleted, version: stored.record.version,
            position: stored.position, fields: try StoredValueFormat.encode(fields: stored.record.fields))
    }

    /// The record with its fields decoded.
    /// - Throws: ``StoreError/Code/corrupt`` when the stored fields cannot be read.
    public func decoded() throws -> StoredRecord {
        StoredRecord(
            record: SyncRecord(
                collection: key.collection, id: key.id, fields: try StoredValueFormat.decodeFields(fields),
                isDeleted: isDeleted, version: version),
            position: position)
    }
}

/// A page of an account's changes with their fields in the stored form: ``ChangeBatch``'s counterpart
/// for ``SyncStore/encodedChanges(for:after:in:limit:)``.
public struct EncodedChangeBatch: Sendable {
    /// The changed records, in order of position.
    public var records: [EncodedStoredRecord]
    /// The position to ask after next time: that of the last record, or the position asked after when there are none.
    public var lastPosition: ChangePosition
    /// Whether more changes follow (the batch stopped at the limit).
    public var hasMore: Bool

    /// Makes a batch.
    public init(records: [EncodedStoredRecord], lastPosition: ChangePosition, hasMore: Bool) {
        self.records = records
        self.lastPosition = lastPosition
        self.hasMore = hasMore
    }

    /// The batch of `batch`'s records, their fields encoded.
    /// - Throws: ``StoreError/Code/invalidArgument`` when a field nests too deep to be stored.
    public init(encoding batch: ChangeBatch) throws {
        self.init(records: try batch.records.map(EncodedStoredRecord.init), lastPosition: batch.lastPosition, hasMore: batch.hasMore)
    }
}

extension ChangeBatch {
    /// `batch` with its records' fields decoded.
    /// - Throws: ``StoreError/Code/corrupt`` when stored fields cannot be read.
    public init(decoding batch: EncodedChangeBatch) throws {
        self.init(records: try batch.records.map { try $0.decoded() }, lastPosition: batch.lastPosition, hasMore: batch.hasMore)
    }
}
