import HTTPTypes
import NIOCore
import NIOHTTPTypes
import SyncCore
import Synchronization

/// The answers to WebSocket upgrades that were refused, kept from the moment the upgrade is decided
/// until the connection writes its answer (``RefusedUpgradeWriter``).
final class UpgradeRefusals: Sendable {
    private let answers = Mutex<[ObjectIdentifier: (head: HTTPResponse, body: ByteBuffer)]>([:])

    /// Keeps the answer to the upgrade refused on `channel`, until taken or the channel closes.
    func keep(head: HTTPResponse, body: ByteBuffer, for channel: any Channel) {
        let id = ObjectIdentifier(channel)
        answers.withLock { $0[id] = (head, body) }
        channel.closeFuture.whenComplete { [self] _ in _ = answers.withLock { $0.removeValue(forKey: id) } }
    }

    /// Keeps `response` (an error's) as the answer to the upgrade refused on `channel`.
    func keep(_ response: SyncResponse, for channel: any Channel) {
        var fields = HTTPFields()
        fields[.contentType] = response.contentType ?? "application/json"
        fields[.contentLength] = String(response.body.count)
        fields[.connection] = "close"
        keep(
            head: HTTPResponse(status: .init(code: response.status), headerFields: fields), body: ByteBuffer(bytes: response.body),
            for: channel)
    }

    /// Takes the answer kept for `channel`, if any.
    func take(for channel: any Channel) -> (head: HTTPResponse, body: ByteBuffer)? {
        answers.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}

/// Writes the kept answer of a refused WebSocket upgrade in place of the bare one.
///
/// `PushStreamChannel` answers every refused upgrade with a bare `400` (a head and an end). This
/// handler, among the connection's HTTP handlers, replaces that head with the kept one and adds the
/// kept body before the end, so the client gets the status and `Error` body that the push server and
/// the responder decided (a 401 with its challenge, a 429 with `Retry-After`, a 404).
final class RefusedUpgradeWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let refusals: UpgradeRefusals
    /// The body to write before the end of the answer being replaced.
    private var pendingBody: ByteBuffer?

    init(_ refusals: UpgradeRefusals) {
        self.refusals = refusals
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status == .badRequest:
            guard let refusal = refusals.take(for: context.channel) else { break }
            pendingBody = refusal.body
            context.write(wrapOutboundOut(.head(refusal.head)), promise: promise)
            return
        case .end(let trailers):
            guard let body = pendingBody else { break }
            pendingBody = nil
            if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(body)), promise: nil) }
            context.write(wrapOutboundOut(.end(trailers)), promise: promise)
            return
        default:
            break
        }
        context.write(data, promise: promise)
    }
}
