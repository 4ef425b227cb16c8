import SyncBinaryPlist
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncXMLPlist

/// The four codecs, for tests that run once per codec.
public enum TestCodec: String, CaseIterable, CustomStringConvertible, Sendable {
    /// JSON.
    case json
    /// MessagePack.
    case msgpack
    /// XML property list.
    case xmlPlist
    /// Binary property list.
    case binaryPlist

    /// The codec.
    public var codec: any SyncCodec {
        switch self {
        case .json: JSONCodec()
        case .msgpack: MessagePackCodec()
        case .xmlPlist: XMLPlistCodec()
        case .binaryPlist: BinaryPlistCodec()
        }
    }

    /// The codec's name on the command line: `json`, `msgpack`, `xml-plist`, `binary-plist`.
    public var commandLineName: String { codec.id.rawValue }

    /// The case's name.
    public var description: String { rawValue }

    /// All four codecs, JSON first.
    public static var all: CodecSet { CodecSet(allCases.map(\.codec)) }
}
