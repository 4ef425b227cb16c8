import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes
import NIOTLS
import SyncCore

/// Closes a connection whose client takes longer than ``ConnectionLimits``
/// allows for its TLS handshake, a request head, a body, or the pause between
/// requests.
///
/// It sits in the pipeline right after TLS (or first, without TLS), where it
/// sees the connection's bytes as they arrive; ``RequestProgressObserver``,
/// among the HTTP handlers, tells it where each request begins and ends.
/// One scheduled task at a time waits for the deadline of the connection's
/// current phase; when it fires it looks again (a body's deadline grows with
/// its bytes) and closes the connection only when the deadline has passed.
final class ConnectionDeadlineHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What the connection waits for.
    enum Phase: Equatable {
        /// The TLS handshake.
        case handshaking
        /// A request: the first (under the head's limit) or a later one (under the keep-alive limit).
        case awaitingRequest(first: Bool)
        /// The rest of a head whose first bytes arrived.
        case readingHead
        /// A request's body, of which `bytes` arrived.
        case readingBody(bytes: Int)
        /// The answer to a request whose body arrived: the request timeout's business, not this handler's.
        case serving
        /// Nothing: the connection carries another protocol now.
        case upgraded
    }

    private let limits: ConnectionLimits
    private let logger: Logger
    private(set) var phase: Phase
    private var phaseStart = NIODeadline.now()
    /// Requests whose head arrived and whose answer has not ended.
    private var requestsOpen = 0
    /// Whether the latest request's answer has started (then a time-out cannot answer 408).
    private var answerStarted = false
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    /// The last bytes of a head being read, to see its end (`\r\n\r\n`) across reads.
    private var headTail: UInt32 = 0

    init(limits: ConnectionLimits, awaitsTLSHandshake: Bool, logger: Logger) {
        self.limits = limits
        self.logger = logger
        self.phase = awaitsTLSHandshake ? .handshaking : .awaitingRequest(first: true)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { enter(phase) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        enter(phase)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch phase {
        case .awaitingRequest(first: true):
            // The head's time counts from the connection's start, not from its first byte.
            phase = .readingHead
            headTail = 0
        case .awaitingRequest(first: false):
            enter(.readingHead)
            headTail = 0
        default:
            break
        }
        if phase == .readingHead, headEnds(in: unwrapInboundIn(data)) {
            // The head is whole: its limit is met. What comes next — a body, an answer, an upgrade —
            // is reported by the HTTP handlers (or ConnectionLimits.connectionUpgraded).
            enter(.serving)
        }
        context.fireChannelRead(data)
    }

    /// Whether `bytes` complete a head's blank line, `\r\n\r\n`, following what came before.
    private func headEnds(in bytes: ByteBuffer) -> Bool {
        for byte in bytes.readableBytesView {
            headTail = headTail << 8 | UInt32(byte)
            if headTail == 0x0D0A_0D0A { return true }
        }
        return false
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent, phase == .handshaking {
            enter(.awaitingRequest(first: true))
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: What the HTTP handlers report

    /// A request's head arrived (parsed).
    func requestHeadArrived() {
        requestsOpen += 1
        answerStarted = false
        guard phase != .upgraded else { return }
        enter(.readingBody(bytes: 0))
    }

    /// `count` bytes of a request's body arrived.
    func requestBodyArrived(_ count: Int) {
        if case .readingBody(let bytes) = phase { phase = .readingBody(bytes: bytes + count) }
    }

    /// A request's body ended.
    func requestEnded() {
        guard case .readingBody = phase else { return }
        enter(.serving)
    }

    /// An answer's head went out.
    func answerHeadSent() { answerStarted = true }

    /// An answer ended.
    func answerEnded() {
        requestsOpen = max(0, requestsOpen - 1)
        guard requestsOpen == 0, phase == .serving else { return }
        enter(.awaitingRequest(first: false))
    }

    /// The connection carries another protocol now.
    func upgraded() { enter(.upgraded) }

    // MARK: The timer

    private func enter(_ newPhase: Phase) {
        phase = newPhase
        phaseStart = .now()
        cancelTimer()
        schedule()
    }

    /// When the current phase ends, or `nil` when it has no limit.
    private var deadline: NIODeadline? {
        func after(_ limit: Duration?) -> NIODeadline? { limit.map { phaseStart + TimeAmount($0) } }
        switch phase {
        case .handshaking: return after(limits.tlsHandshakeTimeout)
        case .awaitingRequest(first: true), .readingHead: return after(limits.headerTimeout)
        case .awaitingRequest(first: false): return after(limits.keepAliveTimeout)
        case .readingBody(let bytes):
            guard let base = after(limits.bodyTimeout) else { return nil }
            guard limits.bodyMinimumRate > 0 else { return base }
            // One second more for every `bodyMinimumRate` bytes that arrived.
            return base + .nanoseconds(Int64(Double(bytes) / Double(limits.bodyMinimumRate) * 1e9))
        case .serving, .upgraded: return nil
        }
    }

    private func schedule() {
        guard let context, let deadline else { return }
        timer = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            guard let current = self.deadline else { return }
            if current > .now() { schedule() } else { expire() }
        }
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }

    /// Closes the connection whose phase took too long, with `408` when a request is half read and unanswered.
    private func expire() {
        guard let context else { return }
        let what: String
        var answer: String? = nil
        switch phase {
        case .handshaking: what = "TLS handshake"
        case .awaitingRequest(first: true): what = "request"
        case .awaitingRequest(first: false): what = "next request on an idle connection"
        case .readingHead:
            what = "request head"
            answer = "the request head did not arrive in time"
        case .readingBody:
            what = "request body"
            if !answerStarted { answer = "the request body did not arrive in time" }
        case .serving, .upgraded: return
        }
        logger.debug(
            "closing a connection that took too long", metadata: ["waited.for": "\(what)", "client": "\(context.channel.remoteAddress?.description ?? "-")"])
        guard let answer else {
            context.close(promise: nil)
            return
        }
        let response = SyncServiceError(status: 408, message: answer).response
        var bytes = context.channel.allocator.buffer(capacity: 160 + response.body.count)
        bytes.writeString(
            "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(response.body.count)\r\n\r\n")
        bytes.writeBytes(response.body)
        context.writeAndFlush(wrapOutboundOut(bytes)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// Tells the connection's ``ConnectionDeadlineHandler`` where each request
/// begins and ends; it sits among the HTTP handlers, after the HTTP codec.
final class RequestProgressObserver: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var deadlines: ConnectionDeadlineHandler?

    init() {}

    func handlerAdded(context: ChannelHandlerContext) {
        deadlines = try? context.pipeline.syncOperations.handler(type: ConnectionDeadlineHandler.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadlines = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: deadlines?.requestHeadArrived()
        case .body(let bytes): deadlines?.requestBodyArrived(bytes.readableBytes)
        case .end: deadlines?.requestEnded()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.kind != .informational: deadlines?.answerHeadSent()
        case .end: deadlines?.answerEnded()
        default: break
        }
        context.write(data, promise: promise)
    }
}
