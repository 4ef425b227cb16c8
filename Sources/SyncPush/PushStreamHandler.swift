import Logging
import NIOCore
import NIOWebSocket
import SyncCore
import Synchronization

/// One device's push stream once its WebSocket is open: writes the hub's notifications as text
/// frames, pings the device and closes a stream whose device missed a ping's answer, answers the
/// device's pings and close, and tells the hub when the connection ends.
///
/// It lives on its channel's event loop and owns no task, so a connected device costs the server
/// its socket, its channel's handlers and one timer; a notification costs one event-loop job.
final class PushStreamHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let key: PushHub.Key
    private let after: UInt64
    private let server: PushServer
    private var context: ChannelHandlerContext?
    private var pinger: RepeatedTask?
    private var awaitingPong = false
    private var closing = false
    /// The hub's id of this connection, once it has connected it.
    private var connectionID: UInt64?
    private var isGone = false

    init(key: PushHub.Key, after: UInt64, server: PushServer) {
        self.key = key
        self.after = after
        self.server = server
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let interval = TimeAmount.nanoseconds(
            max(1, server.configuration.streamPingInterval.components.seconds) * 1_000_000_000)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        pinger = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            handler.value.ping()
        }
        let (hub, key, after) = (server.hub, key, after)
        Task {
            let id = await hub.connect(key, after: after, sink: ChannelPushSink(handler: handler))
            handler.eventLoop.execute {
                let stream = handler.value
                guard let id else {
                    // The registration was forgotten between the upgrade and now: the device registers again.
                    stream.close(code: .goingAway)
                    return
                }
                stream.connectionID = id
                if stream.isGone { Task { await hub.disconnect(key, id: id) } }
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        isGone = true
        pinger?.cancel()
        pinger = nil
        if let id = connectionID {
            let (hub, key) = (server.hub, key)
            Task { await hub.disconnect(key, id: id) }
        }
        server.logger.debug("push stream closed", metadata: ["device": "\(key.device)", "account": "\(key.account)"])
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .pong:
            awaitingPong = false
        case .ping:
            guard !closing else { return }
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            // The device closes: answer its close, then end the connection.
            if closing {
                context.close(promise: nil)
            } else {
                close(code: .normalClosure)
            }
        default:
            // The device sends nothing else; what it sends is read and dropped.
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            // The server stops: close the stream, so the device reconnects to another one.
            close(code: .goingAway)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        server.logger.debug("push stream failed: \(error)", metadata: ["device": "\(key.device)"])
        context.close(promise: nil)
    }

    /// Writes one notification; on the event loop. A device whose unread notifications fill the
    /// channel's buffer is disconnected, and gets its queue on reconnecting.
    func send(_ notification: PushNotification) {
        guard let context, !closing else { return }
        guard context.channel.isWritable else {
            close(code: .goingAway)
            return
        }
        let text = notification.json
        if server.cutMidMessage.withLock({ $0?(notification) }) == true {
            let half = context.channel.allocator.buffer(string: String(text.prefix(text.count / 2)))
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: false, opcode: .text, data: half)), promise: nil)
            close(code: .goingAway)
            return
        }
        let payload = context.channel.allocator.buffer(string: text)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: payload)), promise: nil)
    }

    /// Sends a close frame with `code` and closes the connection once it is written; on the event loop.
    func close(code: WebSocketErrorCode) {
        guard let context, !closing else { return }
        closing = true
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
            .whenComplete { _ in channel.close(promise: nil) }
    }

    /// Pings the device, or closes the stream when it has not answered the last ping.
    private func ping() {
        guard let context, !closing else { return }
        if awaitingPong {
            close(code: .goingAway)
            return
        }
        awaitingPong = true
        let payload = context.channel.allocator.buffer(string: "anchorage")
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: payload)), promise: nil)
    }
}

/// The hub's way into a ``PushStreamHandler``: each call becomes a job on the stream's event loop.
struct ChannelPushSink: PushSink {
    /// The stream's handler, used on its event loop only.
    let handler: NIOLoopBound<PushStreamHandler>

    func send(_ notification: PushNotification) -> Bool {
        handler.eventLoop.execute { handler.value.send(notification) }
        return true
    }

    func finish() {
        handler.eventLoop.execute { handler.value.close(code: .goingAway) }
    }

    var queueIdentity: ObjectIdentifier? { ObjectIdentifier(handler.eventLoop) }

    func drained() async {
        // The loop runs its jobs in order: this one runs after every notification sent before it.
        try? await handler.eventLoop.submit {}.get()
    }
}
