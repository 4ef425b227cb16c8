/// A codec that reads records' fields from its bytes straight into the form the durable stores keep
/// them in (``StoredValueFormat``), without making ``SyncValue``s of them first: a device applies a
/// pulled page of many records at a fraction of the cost. The mirror of ``StoredFieldsEncoding``.
package protocol StoredFieldsDecoding: SyncCodec {
    /// Reads `bytes`, a dictionary, as ``SyncCodec/decode(_:)`` reads it, except that the value of
    /// each entry whose key `isStoredArray` accepts must be an array of dictionaries, and each of
    /// those dictionaries comes back as the fields blob ``StoredValueFormat/encode(fields:)`` makes of
    /// it.
    ///
    /// - Returns: The document, or `nil` when `bytes` are not such a dictionary, break a limit or a
    ///   rule of the codec: ``SyncCodec/decode(_:)`` then reads them, or says what is wrong with them.
    func decodeStoredArrays(_ bytes: [UInt8], where isStoredArray: (String) -> Bool) -> StoredArraysDocument?

    /// Reads only the entries named in `names` of `bytes`, a dictionary, skipping the others without
    /// checking them: a client reads where a page ends, to ask for the next one, before it reads the
    /// page itself.
    /// - Returns: The entries found, or `nil` when `bytes` are not a dictionary or a named entry breaks
    ///   a rule of the codec. A `bytes` that gives entries may still be refused when read whole.
    func decodeEntries(_ bytes: [UInt8], named names: Set<String>) -> [String: SyncValue]?
}

/// A dictionary read by ``StoredFieldsDecoding/decodeStoredArrays(_:where:)``: its entries that are
/// values, and those that are arrays of records' fields in the stored form.
package struct StoredArraysDocument: Sendable {
    /// The entries that are values.
    package var values: [String: SyncValue]
    /// The entries that are arrays of dictionaries, each a fields blob (``StoredValueFormat``).
    package var storedArrays: [String: [[UInt8]]]

    /// Makes a document.
    package init(values: [String: SyncValue] = [:], storedArrays: [String: [[UInt8]]] = [:]) {
        self.values = values
        self.storedArrays = storedArrays
    }
}
