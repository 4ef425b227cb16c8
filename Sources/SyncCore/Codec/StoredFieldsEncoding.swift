#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// A codec that writes records' fields straight from the form the durable stores keep them in
/// (``EncodedStoredRecord``), without making ``SyncValue``s of them first: a server answers a pull of
/// many records at a fraction of the cost. ``StoredFieldsDocument`` is what it writes.
///
/// The bytes are exactly those ``SyncCodec/encode(_:)`` makes of ``StoredFieldsDocument/value()``. A
/// conforming codec carries ``CodecFeatures/null``.
package protocol StoredFieldsEncoding: SyncCodec {
    /// Encodes `document`, as ``SyncCodec/encode(_:)`` encodes ``StoredFieldsDocument/value()``.
    /// - Throws: ``CodecError`` as ``SyncCodec/encode(_:)`` throws it, or ``StoreError/Code/corrupt``
    ///   when stored fields cannot be read.
    func encode(_ document: StoredFieldsDocument) throws -> [UInt8]
}

/// A dictionary whose entries are values and arrays of records' stored fields: a pull's answer, such
/// as Aquasync's DeltaPack, before it is encoded.
package struct StoredFieldsDocument: Sendable {
    /// The entries that are values.
    package var values: [String: SyncValue]
    /// The entries that are arrays of records' fields, each a dictionary; a key here replaces the same key in ``values``.
    package var storedArrays: [String: [StoredFields]]

    /// Makes a document.
    package init(values: [String: SyncValue] = [:], storedArrays: [String: [StoredFields]] = [:]) {
        self.values = values
        self.storedArrays = storedArrays
    }

    /// The document as a value, its stored fields decoded; without `keepingNulls`, the records' fields
    /// whose value is null are left out (for a codec without ``CodecFeatures/null``).
    /// - Throws: ``StoreError/Code/corrupt`` when stored fields cannot be read.
    package func value(keepingNulls: Bool = true) throws -> SyncValue {
        var dictionary = values
        for (key, items) in storedArrays {
            dictionary[key] = .array(
                try items.map { item in
                    let fields = try item.decoded()
                    return .dictionary(keepingNulls ? fields : fields.filter { $0.value != .null })
                })
        }
        return .dictionary(dictionary)
    }

    /// The document encoded with `codec`: from the stored form when the codec can
    /// (``StoredFieldsEncoding``), else as ``value(keepingNulls:)`` (nulls kept when the codec carries them).
    /// - Throws: ``CodecError``, or ``StoreError/Code/corrupt`` when stored fields cannot be read.
    package func encoded(with codec: any SyncCodec) throws -> [UInt8] {
        if let writer = codec as? any StoredFieldsEncoding { return try writer.encode(self) }
        return try codec.encode(value(keepingNulls: codec.features.contains(.null)))
    }
}

/// One record's stored fields as a ``StoredFieldsDocument`` writes them: without the fields named in
/// ``omitted``, and with ``added``'s entries (which replace stored fields of the same names).
package struct StoredFields: Sendable {
    /// The fields in the stored form (``EncodedStoredRecord``'s).
    package var blob: Data
    /// Names of stored fields left out.
    package var omitted: [String]
    /// Entries written besides the stored ones, sorted by their keys' UTF-8 bytes.
    package let added: [(key: String, value: SyncValue)]

    /// The stored fields `blob`, without `omitted`, with `added`.
    package init(_ blob: Data, omitting omitted: [String] = [], adding added: [String: SyncValue] = [:]) {
        self.blob = blob
        self.omitted = omitted
        self.added = added.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { (key: $0.key, value: $0.value) }
    }

    /// The fields as values.
    /// - Throws: ``StoreError/Code/corrupt`` when `blob` cannot be read.
    package func decoded() throws -> [String: SyncValue] {
        var fields = try StoredValueFormat.decodeFields(blob)
        for name in omitted { fields.removeValue(forKey: name) }
        for (key, value) in added { fields[key] = value }
        return fields
    }
}
