import NIOCore
import NIOHTTP1
import SyncCore

/// Answers a request the HTTP decoder cannot read — a head over the size limit (431), bytes that
/// are not HTTP/1.1, such as a TLS handshake sent to a plain-HTTP port (400) — with an `Error` body,
/// and closes the connection, instead of leaving the client waiting.
///
/// ``GuardedChannel`` puts it right after the decoder, where the decoder's errors arrive.
final class MalformedRequestAnswerer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The most bytes of header fields the decoder reads, for the 431's message.
    private let headerLimit: Int
    private var answered = false

    init(headerLimit: Int) {
        self.headerLimit = headerLimit
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !answered else { return }
        answered = true
        let refusal =
            error == .headerOverflow
            ? SyncServiceError(status: 431, message: "the request head is larger than the server reads (\(headerLimit) bytes)")
            : SyncServiceError.badRequest("the request is not HTTP/1.1 (\(error))")
        let response = refusal.response
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(response.body.count))
        headers.add(name: "Connection", value: "close")
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
