public import SyncCore

/// The MessagePack codec: a Swift writer that gives msgpack-c's bytes, a small C pull reader
/// over the input reads, between MessagePack bytes and ``SyncCore/SyncValue``.
///
/// ```swift
/// let codec = MessagePackCodec()
/// let bytes = try codec.encode(["name": "Ada", "born": 1815])
/// // 82 a4 62 6f 72 6e cd 07 17 a4 6e 61 6d 65 a3 41 64 61
/// let value = try codec.decode(bytes)
/// ```
///
/// ## Type mapping
/// `nil` ⇄ ``SyncCore/SyncValue/null``; bool ⇄ ``SyncCore/SyncValue/bool(_:)``;
/// every int and uint that fits `Int64` ⇄ ``SyncCore/SyncValue/integer(_:)``,
/// a uint64 above `Int64.max` ⇄ ``SyncCore/SyncValue/unsignedInteger(_:)``;
/// float64 (and float32 on reading) ⇄ ``SyncCore/SyncValue/real(_:)``; str ⇄
/// ``SyncCore/SyncValue/string(_:)``; bin ⇄ ``SyncCore/SyncValue/data(_:)``;
/// array ⇄ ``SyncCore/SyncValue/array(_:)``; map with str keys ⇄
/// ``SyncCore/SyncValue/dictionary(_:)``; the timestamp extension (type -1)
/// ⇄ ``SyncCore/SyncValue/date(_:)``.
///
/// ## Encoding
/// Every value takes its smallest form, map keys are sorted by their UTF-8
/// bytes, reals are always float64, and a date takes the smallest timestamp
/// form that holds it exactly; the bytes are those of Python's
/// `msgpack.packb(value, use_bin_type=True, datetime=True)` with keys in that order.
///
/// ## Decoding
/// The decoder reads exactly one value that spans the input. It refuses
/// (``SyncCore/CodecError/Code/malformedInput``, with the byte offset)
/// truncated input, the unused byte 0xc1, lengths and counts that run past
/// the end, str bytes that are not UTF-8, map keys that are not str,
/// duplicate keys, extension types other than the timestamp, timestamps of
/// the wrong size or with 10^9 nanoseconds or more, and trailing bytes.
/// ``limits`` bound the input size, the nesting depth and the number of values
/// (``SyncCore/CodecError/Code/limitExceeded``).
public struct MessagePackCodec: SyncCodec {
    /// The limits the decoder enforces; the encoder enforces the depth limit too.
    public let limits: CodecLimits

    /// Makes a MessagePack codec.
    /// - Parameter limits: the input size, depth and value count the decoder accepts.
    public init(limits: CodecLimits = .default) { self.limits = limits }

    /// ``SyncCore/CodecID/messagePack``.
    public var id: CodecID { .messagePack }

    /// `application/x-msgpack` (the primary), `application/msgpack` and `application/vnd.msgpack`.
    public var mediaTypes: [String] { ["application/x-msgpack", "application/msgpack", "application/vnd.msgpack"] }

    /// Everything: `nil`, dates (the timestamp extension), data (bin), unsigned
    /// integers up to 2^64 - 1, and non-finite reals (float64 carries them).
    public var features: CodecFeatures { [.null, .date, .data, .unsignedInteger, .nonFiniteReal] }

    /// Encodes a value as one MessagePack value.
    /// - Throws: ``SyncCore/CodecError`` with ``SyncCore/CodecError/Code/unsupportedValue``
    ///   for a date with no exact timestamp (finer than a nanosecond, not finite,
    ///   or beyond ±2^52 seconds from 1970) or a string, data, array or dictionary
    ///   of 2^32 elements or more; with ``SyncCore/CodecError/Code/limitExceeded``
    ///   for a value nested deeper than ``limits``.
    public func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] {
        try MessagePackWriter.bytes(of: value, maxDepth: limits.maxDepth)
    }

    /// Decodes the one MessagePack value that spans all of `bytes`.
    ///
    /// The same as `decodeDocument(bytes).root.value`: reading the parts of a message you need from
    /// ``decodeDocument(_:)`` is several times faster.
    /// - Throws: ``SyncCore/CodecError`` with ``SyncCore/CodecError/Code/malformedInput``
    ///   (and the byte offset) for input that is not one well-formed value this
    ///   codec reads, and with ``SyncCore/CodecError/Code/limitExceeded`` for
    ///   input past ``limits`` or a timestamp beyond ±2^52 seconds from 1970.
    public func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue {
        try decodeDocument(bytes).root.value
    }

    /// Decodes the one MessagePack value that spans all of `bytes` into a document over them, checked
    /// as ``decode(_:)`` checks it, with no allocation per value: strings and bin stay in `bytes`.
    /// - Throws: what ``decode(_:)`` throws, for the same input.
    public func decodeDocument(_ bytes: [UInt8]) throws(CodecError) -> SyncDocument {
        let limits = self.limits
        return try limits.withInput(bytes) { buffer throws(CodecError) in
            let reader = MessagePackReader(input: buffer, limits: limits)
            return SyncDocument(input: bytes, slots: try reader.readDocument())
        }
    }
}

extension MessagePackCodec: StoredFieldsDecoding {
    /// Reads `bytes`, a map, into a document, and writes the records' fields of each entry `isStoredArray`
    /// accepts into the stored form from the document's slots, without making ``SyncCore/SyncValue``s of them.
    /// - Returns: `nil` when `bytes` are not such a map or break a rule or limit of the codec.
    package func decodeStoredArrays(_ bytes: [UInt8], where isStoredArray: (String) -> Bool) -> StoredArraysDocument? {
        guard let entries = try? decodeDocument(bytes).root.entries else { return nil }
        var document = StoredArraysDocument()
        for (key, node) in entries {
            guard isStoredArray(key) else {
                document.values[key] = node.value
                continue
            }
            guard let records = node.elements else { return nil }
            var blobs: [[UInt8]] = []
            blobs.reserveCapacity(records.count)
            for record in records {
                guard let blob = StoredValueFormat.encode(fields: record) else { return nil }
                blobs.append(blob)
            }
            document.storedArrays[key] = blobs
        }
        return document
    }

    /// Reads the entries named in `names` of `bytes`, a map; the whole input is checked as
    /// ``decode(_:)`` checks it, but only the named entries are made values.
    package func decodeEntries(_ bytes: [UInt8], named names: Set<String>) -> [String: SyncValue]? {
        guard let entries = try? decodeDocument(bytes).root.entries else { return nil }
        var values: [String: SyncValue] = [:]
        for (key, node) in entries where names.contains(key) { values[key] = node.value }
        return values
    }
}
