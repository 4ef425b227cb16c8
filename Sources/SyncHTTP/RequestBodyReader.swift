import Hummingbird
import NIOCore

/// Collects a request body without holding more than a limit in memory.
enum RequestBodyReader {
    /// Why a body could not be collected.
    enum Failure: Error {
        /// The body is longer than the limit (by its `Content-Length`, or as it arrived).
        case tooLarge
        /// The body stream failed (the connection was cut).
        case broken(any Error)
    }

    /// The body's bytes, or why they could not be read.
    static func read(_ request: Request, limit: Int) async -> Result<[UInt8], Failure> {
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit {
            return .failure(.tooLarge)
        }
        var bytes: [UInt8] = []
        do {
            for try await buffer in request.body {
                guard buffer.readableBytes <= limit - bytes.count else { return .failure(.tooLarge) }
                bytes.append(contentsOf: buffer.readableBytesView)
            }
        } catch {
            return .failure(.broken(error))
        }
        return .success(bytes)
    }
}
