import CompressNIO
public import NIOCore

/// The HTTP content codings Anchorage's servers and clients speak, `gzip`
/// and `deflate` (the zlib format, as HTTP means it), through compress-nio
/// (zlib). Bodies are compressed whole and decompressed as a stream, with a
/// limit on the bytes that come out, so a small body that inflates without
/// end is refused while memory stays flat.
///
/// ```swift
/// let coding = ContentCoding.preferred(acceptEncoding: "br, gzip;q=0.8")   // .gzip
/// let compressed = try coding?.compress(body)
/// ```
public enum ContentCoding: String, Sendable, Hashable, CaseIterable {
    /// gzip (RFC 1952).
    case gzip
    /// deflate: the zlib format (RFC 1950), as HTTP's `deflate` coding is.
    case deflate

    /// Why a body could not be decoded.
    public enum DecodingFailure: Error, Sendable, Hashable {
        /// More than the limit came out.
        case tooLarge
        /// The bytes are not of the coding.
        case corrupt
    }

    /// The coding a `Content-Encoding` value names: `nil` for none or `identity`;
    /// throws the name of a coding this side does not speak.
    public static func named(_ contentEncoding: String?) throws(UnsupportedCoding) -> ContentCoding? {
        guard let value = contentEncoding?.trimmingASCIIWhitespace().lowercased(), !value.isEmpty, value != "identity" else {
            return nil
        }
        switch value {
        case "gzip", "x-gzip": return .gzip
        case "deflate": return .deflate
        default: throw UnsupportedCoding(name: value)
        }
    }

    /// A `Content-Encoding` this side does not speak (or a list of several).
    public struct UnsupportedCoding: Error, Sendable, Hashable {
        /// The value as sent.
        public var name: String
    }

    /// The coding to answer in for an `Accept-Encoding` value: gzip when it is accepted, else deflate,
    /// else `nil` (no value, `identity` only, or `q=0` for both).
    public static func preferred(acceptEncoding: String?) -> ContentCoding? {
        guard let acceptEncoding else { return nil }
        var accepted: [String: Double] = [:]
        for item in acceptEncoding.split(separator: ",") {
            let parts = item.split(separator: ";")
            guard let name = parts.first?.trimmingASCIIWhitespace().lowercased(), !name.isEmpty else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingASCIIWhitespace().lowercased() == "q" {
                    quality = Double(pair[1].trimmingASCIIWhitespace()) ?? 0
                }
            }
            accepted[name] = quality
        }
        let wildcard = accepted["*"] ?? 0
        for coding in [ContentCoding.gzip, .deflate] where (accepted[coding.rawValue] ?? wildcard) > 0 { return coding }
        return nil
    }

    /// zlib's own level, which ``compress(_:level:)`` uses unless told otherwise.
    public static let defaultLevel = 6

    /// `bytes` compressed at zlib's `level`: 1, the fastest, to 9, the smallest (6, zlib's own, by default).
    /// - Precondition: `level` is 1 to 9.
    public func compress(_ bytes: [UInt8], level: Int = defaultLevel) throws -> [UInt8] {
        precondition((1...9).contains(level), "a compression level is 1 to 9")
        var input = ByteBuffer(bytes: bytes)
        var output = try input.compress(with: algorithm(level: level))
        return output.readBytes(length: output.readableBytes) ?? []
    }

    /// A decoder for a body that arrives in parts.
    public func decoder(limit: Int) -> Decoder { Decoder(coding: self, limit: limit) }

    /// Decodes a body part by part, holding one window (64 KiB) besides what came out.
    public final class Decoder {
        private let decompressor: any NIODecompressor
        private let limit: Int
        private var started = false
        /// What came out so far.
        public private(set) var output: [UInt8] = []

        init(coding: ContentCoding, limit: Int) {
            decompressor = coding.algorithm(level: ContentCoding.defaultLevel).decompressor
            decompressor.window = ByteBufferAllocator().buffer(capacity: 1 << 16)
            self.limit = limit
        }

        /// Takes the next part of the body.
        public func take(_ part: ByteBuffer) throws(DecodingFailure) {
            var input = part
            do {
                if !started {
                    try decompressor.startStream()
                    started = true
                }
                try input.decompressStream(with: decompressor) { chunk in
                    guard chunk.readableBytes <= limit - output.count else { throw DecodingFailure.tooLarge }
                    output.append(contentsOf: chunk.readableBytesView)
                }
            } catch let failure as DecodingFailure {
                throw failure
            } catch {
                throw .corrupt
            }
        }

        /// Ends the body and returns what came out.
        public func finish() throws(DecodingFailure) -> [UInt8] {
            if started { try? decompressor.finishStream() }
            return output
        }
    }

    /// Whether `bytes` begin as this coding's bytes do (gzip's magic number, zlib's header check), so
    /// that a body an HTTP client decoded already is not decoded twice.
    public func looksEncoded(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2 else { return false }
        switch self {
        case .gzip: return bytes[0] == 0x1F && bytes[1] == 0x8B
        case .deflate: return bytes[0] & 0x0F == 8 && (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0
        }
    }

    private func algorithm(level: Int) -> CompressionAlgorithm {
        let configuration = ZlibConfiguration(compressionLevel: Int32(level))
        return switch self {
        case .gzip: .gzip(configuration: configuration)
        case .deflate: .zlib(configuration: configuration)
        }
    }
}

extension StringProtocol {
    /// The text without ASCII spaces and tabs at either end.
    fileprivate func trimmingASCIIWhitespace() -> Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
