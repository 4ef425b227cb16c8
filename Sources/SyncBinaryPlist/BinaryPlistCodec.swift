public import SyncCore

/// The binary property list codec (`bplist00`, Apple's binary plist format),
/// written in Swift on byte buffers.
///
/// ```swift
/// let codec = BinaryPlistCodec()
/// let bytes = try codec.encode(["name": "Ada", "born": .date(born), "photo": .data(jpeg)])
/// // "bplist00…", readable by PropertyListSerialization and Python's plistlib
/// let value = try codec.decode(bytes)
/// ```
///
/// ## Types
/// | SyncValue | bplist object |
/// |---|---|
/// | ``SyncCore/SyncValue/string(_:)`` | ASCII string (`0x5`) when every byte is below 0x80, else UTF-16BE (`0x6`) |
/// | ``SyncCore/SyncValue/integer(_:)`` | integer: 1, 2 or 4 bytes unsigned, else 8 bytes signed (negative values always 8) |
/// | ``SyncCore/SyncValue/unsignedInteger(_:)`` | 16-byte integer, as Apple writes values above `Int64.max` |
/// | ``SyncCore/SyncValue/real(_:)`` | 8-byte real (4-byte reals are read too) |
/// | ``SyncCore/SyncValue/bool(_:)`` | `0x08` / `0x09` |
/// | ``SyncCore/SyncValue/date(_:)`` | date: Float64 seconds since 2001-01-01 UTC, exactly `timeIntervalSinceReferenceDate` |
/// | ``SyncCore/SyncValue/data(_:)`` | data |
/// | ``SyncCore/SyncValue/array(_:)`` / ``SyncCore/SyncValue/dictionary(_:)`` | array / dictionary (keys sorted by UTF-8 bytes) |
/// | ``SyncCore/SyncValue/null`` | refused: Apple's readers reject the `0x00` object, so it is never written nor read |
///
/// A UID (`0x8`, from keyed archives) is read as Foundation's decoders show it,
/// the dictionary `["CF$UID": n]`; it is never written. Sets, URLs and UUIDs
/// are refused.
///
/// ## Layout
/// Equal strings, integers, reals, dates and data are written once; arrays
/// and dictionaries never are. Object references and offset table entries use
/// the fewest bytes that hold them, so equal values always give equal bytes.
///
/// ## Decoding
/// The reader checks the header, the trailer (sizes, object count, top
/// object, an offset table that exactly fills the space before the trailer)
/// and then every offset, reference and count before using it. It refuses
/// cycles, duplicate keys, non-string keys, non-ASCII bytes in ASCII strings,
/// unpaired surrogates in UTF-16 strings, and enforces ``limits``.
public struct BinaryPlistCodec: SyncCodec {
    /// The limits the decoder enforces; the encoder enforces the depth limit too.
    public let limits: CodecLimits

    /// Makes a binary property list codec.
    /// - Parameter limits: the input size, depth and value count the decoder accepts.
    public init(limits: CodecLimits = .default) { self.limits = limits }

    /// ``SyncCore/CodecID/binaryPlist``.
    public var id: CodecID { .binaryPlist }

    /// `application/x-bplist`, then `application/octet-stream` (as the OTA protocol sends binary plists).
    public var mediaTypes: [String] { ["application/x-bplist", "application/octet-stream"] }

    /// Dates, data, integers up to `UInt64.max` and non-finite reals; not null.
    public var features: CodecFeatures { [.date, .data, .unsignedInteger, .nonFiniteReal] }

    /// Encodes a value as a `bplist00` file.
    /// - Throws: ``SyncCore/CodecError`` with ``SyncCore/CodecError/Code/unsupportedValue``
    ///   for ``SyncCore/SyncValue/null`` anywhere in the value, and with
    ///   ``SyncCore/CodecError/Code/limitExceeded`` for a value nested deeper than ``limits``.
    public func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] {
        try BinaryPlistWriter.encode(value, maxDepth: limits.maxDepth)
    }

    /// Decodes the `bplist00` file that spans all of `bytes`.
    /// - Throws: ``SyncCore/CodecError`` with ``SyncCore/CodecError/Code/malformedInput``
    ///   (and the byte offset) for a bad header or trailer, an offset, reference
    ///   or count that points outside the file, a cycle, a duplicate or
    ///   non-string key, a bad string or an object type this codec does not read;
    ///   with ``SyncCore/CodecError/Code/limitExceeded`` for input past ``limits``
    ///   or a 16-byte integer outside `Int64.min...UInt64.max`.
    public func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue {
        let limits = self.limits
        return try limits.withInput(bytes) { buffer throws(CodecError) in
            var reader = try BinaryPlistReader(input: buffer, limits: limits)
            return try reader.readDocument()
        }
    }
}
