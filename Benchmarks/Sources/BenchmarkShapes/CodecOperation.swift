import CMsgPackPeer
import CXMLPeer
import Foundation
import SyncBinaryPlist
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncXMLPlist

/// One measurable operation: a subject encoding or decoding one shape, with
/// everything it needs prepared beforehand, so that ``run()`` does only the work.
///
/// ```swift
/// let operation = try CodecOperation(.anchorageJSON, .decode, .records)
/// let bytesRead = try operation.run()
/// ```
public struct CodecOperation {
    /// Who runs.
    public let subject: CodecSubject
    /// Encode or decode.
    public let direction: CodecDirection
    /// On which document.
    public let shape: BenchmarkShape
    /// The document's size in the subject's format: what a decode reads, what an encode writes.
    public let documentBytes: Int
    private let body: () throws -> Int

    /// Prepares an operation: encodes the document once (for a decode) or
    /// converts it to the subject's input (for an encode).
    /// - Throws: when the subject cannot carry the shape, or a codec fails.
    public init(_ subject: CodecSubject, _ direction: CodecDirection, _ shape: BenchmarkShape) throws {
        self.subject = subject
        self.direction = direction
        self.shape = shape
        let prepared = try Self.prepare(subject, direction, shape)
        documentBytes = prepared.documentBytes
        body = prepared.body
    }

    /// Runs the operation once.
    /// - Returns: the number of bytes written or read.
    /// - Throws: what the subject throws.
    public func run() throws -> Int { try body() }

    private typealias Prepared = (documentBytes: Int, body: () throws -> Int)

    private static func prepare(
        _ subject: CodecSubject, _ direction: CodecDirection, _ shape: BenchmarkShape
    ) throws -> Prepared {
        let value = shape.value
        switch subject {
        case .anchorageXMLPlist: return try anchorage(XMLPlistCodec(), direction, value)
        case .anchorageBinaryPlist: return try anchorage(BinaryPlistCodec(), direction, value)
        case .anchorageJSON: return try anchorage(JSONCodec(), direction, value)
        case .anchorageMessagePack: return try anchorage(MessagePackCodec(), direction, value)
        case .anchorageMessagePackDocument:
            let codec = MessagePackCodec()
            let bytes = try codec.encode(value)
            return (bytes.count, {
                _ = try codec.decodeDocument(bytes)
                return bytes.count
            })
        case .propertyListSerializationXML:
            return try propertyListSerialization(.xml, direction, FoundationValues.propertyList(value))
        case .propertyListSerializationBinary:
            return try propertyListSerialization(.binary, direction, FoundationValues.propertyList(value))
        case .propertyListCoderXML, .propertyListCoderBinary:
            let format: PropertyListSerialization.PropertyListFormat = subject == .propertyListCoderXML ? .xml : .binary
            switch shape {
            case .message: return try propertyListCoder(format, direction, SyncChangesMessage(value))
            case .records: return try propertyListCoder(format, direction, contacts(value))
            }
        case .jsonSerialization: return try jsonSerialization(direction, FoundationValues.json(value))
        case .jsonCoder:
            switch shape {
            case .message: return try jsonCoder(direction, SyncChangesMessage(value))
            case .records: return try jsonCoder(direction, contacts(value))
            }
        case .msgpackC: return try msgpackC(direction, MessagePackCodec().encode(value))
        case .libxml2SAX2: return try libxml2SAX2(direction, XMLPlistCodec().encode(value))
        }
    }

    private static func contacts(_ value: SyncValue) throws -> [Contact] {
        guard case .array(let array) = value else { throw ShapeMismatch(description: "records: not an array") }
        return try array.map(Contact.init)
    }

    private static func anchorage(
        _ codec: some SyncCodec, _ direction: CodecDirection, _ value: SyncValue
    ) throws -> Prepared {
        let bytes = try codec.encode(value)
        switch direction {
        case .encode: return (bytes.count, { try codec.encode(value).count })
        case .decode:
            return (bytes.count, {
                _ = try codec.decode(bytes)
                return bytes.count
            })
        }
    }

    private static func propertyListSerialization(
        _ format: PropertyListSerialization.PropertyListFormat, _ direction: CodecDirection, _ tree: Any
    ) throws -> Prepared {
        let data = try PropertyListSerialization.data(fromPropertyList: tree, format: format, options: 0)
        switch direction {
        case .encode:
            return (data.count, { try PropertyListSerialization.data(fromPropertyList: tree, format: format, options: 0).count })
        case .decode:
            return (data.count, {
                _ = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
                return data.count
            })
        }
    }

    private static func propertyListCoder<Model: Codable>(
        _ format: PropertyListSerialization.PropertyListFormat, _ direction: CodecDirection, _ model: Model
    ) throws -> Prepared {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format
        let data = try encoder.encode(model)
        switch direction {
        case .encode: return (data.count, { try encoder.encode(model).count })
        case .decode:
            let decoder = PropertyListDecoder()
            return (data.count, {
                _ = try decoder.decode(Model.self, from: data)
                return data.count
            })
        }
    }

    private static func jsonSerialization(_ direction: CodecDirection, _ tree: Any) throws -> Prepared {
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        let data = try JSONSerialization.data(withJSONObject: tree, options: options)
        switch direction {
        case .encode: return (data.count, { try JSONSerialization.data(withJSONObject: tree, options: options).count })
        case .decode:
            return (data.count, {
                _ = try JSONSerialization.jsonObject(with: data)
                return data.count
            })
        }
    }

    private static func jsonCoder<Model: Codable>(_ direction: CodecDirection, _ model: Model) throws -> Prepared {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(model)
        switch direction {
        case .encode: return (data.count, { try encoder.encode(model).count })
        case .decode:
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return (data.count, {
                _ = try decoder.decode(Model.self, from: data)
                return data.count
            })
        }
    }

    private static func msgpackC(_ direction: CodecDirection, _ bytes: [UInt8]) throws -> Prepared {
        switch direction {
        case .encode:
            let document = try MsgPackDocument(bytes)
            return (bytes.count, {
                let written = CMsgPackPeer_encode(document.pointer)
                guard written > 0 else { throw PeerFailure(description: "msgpack_pack_object failed") }
                return written
            })
        case .decode:
            return (bytes.count, {
                let read = bytes.withUnsafeBufferPointer { CMsgPackPeer_decode($0.baseAddress, $0.count) }
                guard read == bytes.count else { throw PeerFailure(description: "msgpack_unpack failed") }
                return read
            })
        }
    }

    private static func libxml2SAX2(_ direction: CodecDirection, _ bytes: [UInt8]) throws -> Prepared {
        guard direction == .decode else { throw PeerFailure(description: "a SAX parser does not encode") }
        return (bytes.count, {
            let events = bytes.withUnsafeBufferPointer { CXMLPeer_parseSAX2($0.baseAddress, $0.count) }
            guard events > 0 else { throw PeerFailure(description: "libxml2 found the document malformed") }
            return bytes.count
        })
    }
}

/// A peer library that failed on a document the benchmarks made.
struct PeerFailure: Error, CustomStringConvertible {
    var description: String
}

/// A MessagePack document unpacked once by msgpack-c, freed with its owner.
private final class MsgPackDocument {
    let pointer: OpaquePointer

    init(_ bytes: [UInt8]) throws {
        guard let pointer = bytes.withUnsafeBufferPointer({ CMsgPackPeer_documentCreate($0.baseAddress, $0.count) })
        else { throw PeerFailure(description: "msgpack_unpack failed") }
        self.pointer = pointer
    }

    deinit { CMsgPackPeer_documentDestroy(pointer) }
}
