/// Who encodes or decodes in a codec benchmark: one of Anchorage's four codecs
/// or a peer they are measured against.
public enum CodecSubject: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Anchorage's `XMLPlistCodec`.
    case anchorageXMLPlist = "Anchorage XML plist"
    /// Anchorage's `BinaryPlistCodec`.
    case anchorageBinaryPlist = "Anchorage binary plist"
    /// Anchorage's `JSONCodec`.
    case anchorageJSON = "Anchorage JSON"
    /// Anchorage's `MessagePackCodec`.
    case anchorageMessagePack = "Anchorage MessagePack"
    /// Anchorage's `MessagePackCodec` decoding into a `SyncDocument` (`decodeDocument`): one array of
    /// slots over the input, as msgpack-c's `msgpack_unpack` builds `msgpack_object`s in a zone.
    case anchorageMessagePackDocument = "Anchorage MessagePack document"
    /// Foundation's `PropertyListSerialization` writing and reading XML, on `Any` trees.
    case propertyListSerializationXML = "PropertyListSerialization XML"
    /// Foundation's `PropertyListSerialization` writing and reading `bplist00`, on `Any` trees.
    case propertyListSerializationBinary = "PropertyListSerialization binary"
    /// `PropertyListEncoder`/`PropertyListDecoder` with the XML format, on `Codable` models.
    case propertyListCoderXML = "PropertyListEncoder/Decoder XML"
    /// `PropertyListEncoder`/`PropertyListDecoder` with the binary format, on `Codable` models.
    case propertyListCoderBinary = "PropertyListEncoder/Decoder binary"
    /// Foundation's `JSONSerialization`, sorted keys, on `Any` trees.
    case jsonSerialization = "JSONSerialization"
    /// `JSONEncoder`/`JSONDecoder`, sorted keys and ISO 8601 dates, on `Codable` models.
    case jsonCoder = "JSONEncoder/Decoder"
    /// msgpack-c called from C: `msgpack_unpack` into a zone, `msgpack_pack_object` into an sbuffer.
    case msgpackC = "msgpack-c"
    /// libxml2's SAX2 parser with callbacks that do nothing: the floor under any XML plist decoder.
    case libxml2SAX2 = "libxml2 SAX2 (no-op)"

    /// The subject's name in benchmark names and tables.
    public var description: String { rawValue }

    /// Whether this is one of Anchorage's codecs (rather than a peer).
    public var isAnchorage: Bool {
        switch self {
        case .anchorageXMLPlist, .anchorageBinaryPlist, .anchorageJSON, .anchorageMessagePack, .anchorageMessagePackDocument:
            true
        default: false
        }
    }

    /// The directions the subject can run in: a SAX parse and a document only read.
    public var directions: [CodecDirection] {
        self == .libxml2SAX2 || self == .anchorageMessagePackDocument ? [.decode] : CodecDirection.allCases
    }
}

/// Whether a benchmark turns values into bytes or bytes into values.
public enum CodecDirection: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Values to bytes.
    case encode
    /// Bytes to values.
    case decode

    /// `encode` or `decode`.
    public var description: String { rawValue }
}
