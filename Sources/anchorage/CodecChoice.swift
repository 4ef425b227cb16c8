import ArgumentParser
import SyncBinaryPlist
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncXMLPlist

/// A codec named on the command line.
enum CodecChoice: String, CaseIterable, ExpressibleByArgument {
    case xmlPlist = "xml-plist"
    case binaryPlist = "binary-plist"
    case json
    case msgpack

    /// The codec.
    var codec: any SyncCodec {
        switch self {
        case .xmlPlist: XMLPlistCodec()
        case .binaryPlist: BinaryPlistCodec()
        case .json: JSONCodec()
        case .msgpack: MessagePackCodec()
        }
    }

    /// Every built-in codec, JSON first (the default of every server).
    static var allCodecs: CodecSet { CodecSet([JSONCodec(), MessagePackCodec(), XMLPlistCodec(), BinaryPlistCodec()]) }

    /// Guesses the format of `bytes` from their first bytes.
    static func detect(_ bytes: [UInt8]) -> CodecChoice? {
        if bytes.starts(with: Array("bplist00".utf8)) { return .binaryPlist }
        let firstVisible = bytes.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        switch firstVisible {
        case UInt8(ascii: "<"): return .xmlPlist
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""): return .json
        case nil: return nil
        default: break
        }
        // A MessagePack document starts with a map or array header more often than not.
        if let first = bytes.first, (0x80...0x9F).contains(first) || [0xDC, 0xDD, 0xDE, 0xDF].contains(first) {
            return .msgpack
        }
        return nil
    }
}
