import Hummingbird
import NIOCore
import SyncHTTP

/// Collects a request body without holding more than a limit in memory, decoding a compressed one
/// (`Content-Encoding: gzip` or `deflate`) as it arrives.
enum RequestBodyReader {
    /// Why a body could not be collected.
    enum Failure: Error {
        /// The body is longer than the limit (by its `Content-Length`, or as it arrived), compressed or decoded.
        case tooLarge
        /// The body stream failed (the connection was cut).
        case broken(any Error)
        /// The body's `Content-Encoding` is not one the server speaks.
        case unsupportedCoding(String)
        /// The body is not of the coding its `Content-Encoding` names.
        case corrupt(ContentCoding)
    }

    /// The body's bytes (decoded), or why they could not be read. `limit` holds for the bytes that
    /// arrive and for the bytes they decode to.
    static func read(_ request: Request, limit: Int) async -> Result<[UInt8], Failure> {
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit {
            return .failure(.tooLarge)
        }
        let coding: ContentCoding?
        do {
            coding = try ContentCoding.named(request.headers[.contentEncoding])
        } catch {
            return .failure(.unsupportedCoding(error.name))
        }
        let decoder = coding?.decoder(limit: limit)
        var bytes: [UInt8] = []
        var arrived = 0
        do {
            for try await buffer in request.body {
                guard buffer.readableBytes <= limit - arrived else { return .failure(.tooLarge) }
                arrived += buffer.readableBytes
                if let decoder {
                    try decoder.take(buffer)
                } else {
                    bytes.append(contentsOf: buffer.readableBytesView)
                }
            }
            if let decoder { bytes = try decoder.finish() }
        } catch ContentCoding.DecodingFailure.tooLarge {
            return .failure(.tooLarge)
        } catch is ContentCoding.DecodingFailure {
            return .failure(.corrupt(coding ?? .gzip))
        } catch {
            return .failure(.broken(error))
        }
        return .success(bytes)
    }
}
