public import SyncCore

/// Apple's XML property list (`<plist version="1.0">`), read with libxml2's
/// SAX2 parser and written by streaming bytes directly.
///
/// ```swift
/// let codec = XMLPlistCodec()
/// let bytes = try codec.encode(["name": "Ada", "born": .date(birthday)])
/// let value = try codec.decode(bytes)   // ["born": .date(…), "name": "Ada"]
/// ```
///
/// ## What the format carries
/// Strings, 64-bit integers (and unsigned ones up to 2⁶⁴−1), reals including
/// infinities and NaN, Booleans, dates to the whole second (years 0000–9999),
/// data, arrays and dictionaries. It cannot carry:
/// - ``SyncValue/null``;
/// - a date with a fraction of a second (refused, never rounded);
/// - strings with characters XML 1.0 forbids: U+0000–U+0008, U+000B, U+000C,
///   U+000E–U+001F, U+FFFE and U+FFFF.
///
/// The encoder refuses these with ``CodecError/Code/unsupportedValue`` and a
/// message that names the place, such as `(at root.items[3])`. A carriage
/// return is written as `&#13;` so that XML's line-end normalisation keeps it.
///
/// ## What the decoder reads
/// A document whose root is `<plist>` holding exactly one value (a bare value
/// without the wrapper is refused). Integers are decimal or `0x` hexadecimal
/// with an optional sign; reals are decimal or `nan`, `inf`, `infinity` with
/// an optional sign; `<data>` may hold white space anywhere. A duplicate
/// `<key>` in a `<dict>`, text where no text belongs, an unknown element, and
/// any entity other than XML's five predefined ones are malformed input. A
/// `<!DOCTYPE>` is allowed (Apple writes one) but never fetched; a document
/// that declares entities is refused, which rules out external-entity and
/// entity-expansion attacks.
public struct XMLPlistCodec: SyncCodec {
    /// ``CodecID/xmlPlist``.
    public var id: CodecID { .xmlPlist }
    /// `application/x-plist`, `text/xml`, `application/xml`.
    public var mediaTypes: [String] { ["application/x-plist", "text/xml", "application/xml"] }
    /// Dates, data, unsigned integers, and non-finite reals.
    public var features: CodecFeatures { [.date, .data, .unsignedInteger, .nonFiniteReal] }
    /// The limits the decoder enforces; `maxDepth` also bounds what the encoder writes.
    public let limits: CodecLimits

    /// Makes a codec.
    public init(limits: CodecLimits = .default) {
        self.limits = limits
    }

    /// Writes `value` as an XML property list with Apple's layout: the XML
    /// declaration, the plist DOCTYPE, tab indentation, dictionary keys sorted
    /// by their UTF-8 bytes.
    /// - Throws: ``CodecError`` with ``CodecError/Code/unsupportedValue`` for
    ///   null, a sub-second date and characters XML 1.0 cannot carry;
    ///   ``CodecError/Code/limitExceeded`` for nesting deeper than `limits.maxDepth`.
    public func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] {
        var writer = XMLPlistWriter(maxDepth: limits.maxDepth)
        do {
            try writer.writeDocument(value)
        } catch {
            throw error.codecError
        }
        return writer.output
    }

    /// Reads one XML property list that spans all of `bytes`.
    /// - Throws: ``CodecError`` with ``CodecError/Code/malformedInput`` for a
    ///   document that is not well-formed XML or not a property list, and
    ///   ``CodecError/Code/limitExceeded`` for input past `limits`.
    public func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue {
        guard bytes.count <= limits.maxInputBytes else {
            throw .limitExceeded("the input has \(bytes.count) bytes, more than the limit of \(limits.maxInputBytes)")
        }
        return try XMLPlistSAXParser.parse(bytes, limits: limits)
    }
}
