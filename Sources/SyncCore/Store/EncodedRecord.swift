package import FoundationEssentials

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
/// A store that keeps records in another form (``MemoryStore``) writes ``record`` as ``StoreTransaction/put(_:)-(SyncRecord)`` does.
public struct EncodedRecord: Sendable {
    /// The record.
    public let record: SyncRecord
    /// ``record``'s fields in the stored form.
    package let fields: Data

    /// Encodes `record`'s fields.
    /// - Throws: ``StoreError/Code/invalidArgument`` when a field nests too deep to be stored.
    public init(_ record: SyncRecord) throws {
        self.record = record
        self.fields = try StoredValueFormat.encode(fields: record.fields)
    }
}
