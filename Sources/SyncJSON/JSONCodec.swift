public import SyncCore

/// The JSON codec (RFC 8259): a hand-written byte-level parser and writer
/// between UTF-8 bytes and ``SyncCore/SyncValue``.
///
/// ```swift
/// let codec = JSONCodec()
/// let bytes = try codec.encode(["name": "Ada", "born": 1815])
/// // {"born":1815,"name":"Ada"}
/// let value = try codec.decode(bytes)
/// ```
///
/// ## Decoding
/// The decoder is strict: exactly one value with optional surrounding white
/// space and nothing after it; valid UTF-8 throughout (no overlong forms, no
/// encoded surrogates, nothing truncated) and no byte order mark; no raw
/// control characters in strings; no lone surrogates in `\u` escapes; no
/// duplicate keys in an object (keys compare as Swift strings, so two
/// canonically equivalent spellings count as the same key); no leading
/// zeros, `NaN` or `Infinity`. An integer becomes
/// ``SyncCore/SyncValue/integer(_:)`` when it fits `Int64`,
/// ``SyncCore/SyncValue/unsignedInteger(_:)`` when it fits `UInt64` above
/// that, and is refused otherwise; it never silently becomes a real. A number
/// with a fraction or an exponent becomes a correctly rounded
/// ``SyncCore/SyncValue/real(_:)``; one that overflows to infinity is refused.
/// ``limits`` bound the input size, the nesting depth and the number of values.
///
/// ## Encoding
/// Output is compact and deterministic: no white space, object keys sorted
/// by their UTF-8 bytes, non-ASCII text written as raw UTF-8, U+2028 and
/// U+2029 escaped. Reals use the fewest digits that read back to the same
/// `Double` and always look like reals: positional from 1e-4 up to 1e16
/// (`3.0`, `0.0001`), with an exponent outside that (`1e-05`, `1e+300`).
/// The bytes are those of Python's `json.dumps(value, sort_keys=True,
/// separators=(",", ":"), ensure_ascii=False)`, but for the escaped U+2028
/// and U+2029. JSON has no date or data type, so a
/// ``SyncCore/SyncValue/date(_:)`` travels as an ISO 8601 UTC string
/// (`2024-05-01T12:30:00Z`, with up to six fraction digits when the date has
/// a fraction of a second) and a ``SyncCore/SyncValue/data(_:)`` as a padded
/// standard base64 string; both decode as strings.
public struct JSONCodec: SyncCodec, StoredFieldsEncoding, StoredFieldsDecoding {
    /// The limits the decoder enforces; the encoder enforces the depth limit too.
    public var limits: CodecLimits

    /// Makes a JSON codec.
    /// - Parameter limits: the input size, depth and value count the decoder accepts.
    public init(limits: CodecLimits = .default) {
        self.limits = limits
    }

    /// ``SyncCore/CodecID/json``.
    public var id: CodecID { .json }

    /// `["application/json"]`.
    public var mediaTypes: [String] { ["application/json"] }

    /// ``SyncCore/CodecFeatures/null`` and ``SyncCore/CodecFeatures/unsignedInteger``;
    /// dates and data travel as strings, so they are not carried as their own kinds.
    public var features: CodecFeatures { [.null, .unsignedInteger] }

    /// Encodes a value as one compact JSON text.
    /// - Throws: ``SyncCore/CodecError`` with ``SyncCore/CodecError/Code/unsupportedValue``
    ///   for a non-finite real or a date outside the years 0000–9999, and with
    ///   ``SyncCore/CodecError/Code/limitExceeded`` for a value nested deeper than ``limits``.
    public func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] {
        let maxDepth = limits.maxDepth
        let estimate = JSONSize.estimate(of: value, depth: 0, maxDepth: maxDepth)
        return try JSONWriter.bytes(capacity: estimate + estimate / 32 + 64, maxDepth: maxDepth) { writer throws(CodecError) in
            try writer.write(value, depth: 0)
        }
    }

    /// Encodes `document` as ``encode(_:)-(SyncValue)`` encodes its value, writing records' stored
    /// fields from their stored form: how a server answers a pull of many records in JSON.
    /// - Throws: what ``encode(_:)-(SyncValue)`` throws, or `StoreError` when stored fields cannot be read.
    package func encode(_ document: StoredFieldsDocument) throws -> [UInt8] {
        var estimate = 64
        for value in document.values.values { estimate += JSONSize.estimate(of: value, depth: 1, maxDepth: limits.maxDepth) }
        for items in document.storedArrays.values {
            for item in items { estimate += item.blob.count + item.blob.count / 2 + 16 }
        }
        return try JSONWriter.bytes(capacity: estimate, maxDepth: limits.maxDepth) { writer in
            try writer.write(document)
        }
    }

    /// Reads `bytes` as ``decode(_:)`` does, but for the arrays of dictionaries under the keys
    /// `isStoredArray` accepts, whose dictionaries are read straight into the stored form: how a device
    /// reads a pulled page of many records. Keys are put in the order of their bytes; `nil` for input
    /// ``decode(_:)`` refuses, and for records that are not dictionaries.
    package func decodeStoredArrays(_ bytes: [UInt8], where isStoredArray: (String) -> Bool) -> StoredArraysDocument? {
        withParser(of: bytes) { parser in parser.parseStoredArraysDocument(where: isStoredArray) }
    }

    /// Reads only the entries named in `names` of `bytes`, a JSON object, as ``decode(_:)`` reads
    /// them, and skips the others by their brackets and quotes without checking them; `nil` when
    /// `bytes` are not an object or a named entry is malformed.
    package func decodeEntries(_ bytes: [UInt8], named names: Set<String>) -> [String: SyncValue]? {
        withParser(of: bytes) { parser in parser.parseEntries(named: names) }
    }

    /// What `read` makes of a parser of `bytes`, or `nil` when `bytes` are longer than the limit.
    private func withParser<Result>(of bytes: [UInt8], _ read: (inout JSONParser) -> Result?) -> Result? {
        guard bytes.count <= limits.maxInputBytes else { return nil }
        let limits = self.limits
        return bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(input: buffer, limits: limits)
            return read(&parser)
        }
    }

    /// Decodes the one JSON text that spans all of `bytes`.
    /// - Throws: ``SyncCore/CodecError`` with ``SyncCore/CodecError/Code/malformedInput``
    ///   (and the byte offset) for anything RFC 8259 does not allow or for a
    ///   duplicate key, and with ``SyncCore/CodecError/Code/limitExceeded`` for input
    ///   past ``limits`` or a number outside the range of `Int64`, `UInt64` or `Double`.
    public func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue {
        let limits = self.limits
        return try limits.withInput(bytes) { buffer throws(CodecError) in
            var parser = JSONParser(input: buffer, limits: limits)
            return try parser.parseDocument()
        }
    }
}
