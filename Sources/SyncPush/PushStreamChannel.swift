import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOConcurrencyHelpers
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The push server's connections: HTTP/1.1 for every request, and for a granted upgrade of the
/// stream path a WebSocket run by ``PushStreamHandler`` on the connection's event loop.
///
/// An upgraded connection leaves no task behind (``handle(value:logger:)`` returns at once): the
/// channel's handlers carry the stream, and the server's quiescing closes it when the server stops.
struct PushStreamChannel: ServerChildChannel, HTTPChannelHandler {
    /// What became of a connection's first request.
    enum UpgradeResult: Sendable {
        /// It opened a push stream; the channel's handlers carry it from here.
        case stream
        /// It was an ordinary request: the connection serves HTTP.
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// It asked for an upgrade that was refused: the connection carries the refusal, then closes.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    /// The connection's state after setup.
    struct Value: ServerChildChannelValue {
        /// Resolved once the first request was read (or the upgrade decided).
        let upgradeResult: EventLoopFuture<UpgradeResult>
        /// The connection.
        let channel: any Channel
    }

    /// A granted stream: whose, and after which notification.
    struct Grant: Sendable {
        var key: PushHub.Key
        var after: UInt64
    }

    /// Answers ordinary requests.
    let responder: HTTPChannelHandler.Responder
    private let http1: HTTP1Channel.Configuration
    private let maxFrameSize: Int
    private let server: PushServer
    private let decide: @Sendable (HTTPRequest, any Channel) async -> Grant?

    init(
        responder: @escaping HTTPChannelHandler.Responder, http1: HTTP1Channel.Configuration, maxFrameSize: Int,
        server: PushServer, decide: @escaping @Sendable (HTTPRequest, any Channel) async -> Grant?
    ) {
        self.responder = Self.refusingStrayUpgrades(responder)
        self.http1 = http1
        self.maxFrameSize = maxFrameSize
        self.server = server
        self.decide = decide
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let attempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let granted = NIOLockedValueBox<Grant?>(nil)
            let (decide, server, http1) = (decide, server, http1)
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: maxFrameSize,
                shouldUpgrade: { channel, head in
                    attempted.value = true
                    let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                    promise.completeWithTask {
                        guard let request = try? HTTPRequest(head, secure: false, splitCookie: false),
                            let grant = await decide(request, channel)
                        else { return nil }
                        granted.withLockedValue { $0 = grant }
                        return HTTPHeaders()
                    }
                    return promise.futureResult
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard let grant = granted.withLockedValue({ $0 }) else { throw ChannelError.inappropriateOperationForState }
                        try channel.pipeline.syncOperations.addHandler(
                            PushStreamHandler(key: grant.key, after: grant.after, server: server))
                        return UpgradeResult.stream
                    }
                })
            let upgrades = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandlers(http1.additionalChannelHandlers())
                        try channel.pipeline.syncOperations.addHandler(
                            HTTPConnectionStateHandler(idleTimeout: http1.idleTimeout.map { .init($0) }, logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        return attempted.value ? UpgradeResult.refused(http) : UpgradeResult.notUpgraded(http)
                    }
                })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: upgrades)
            configuration.enablePipelining = false  // NIOAsyncChannel takes one request at a time
            configuration.enableErrorHandling = false  // Hummingbird answers malformed requests
            configuration.enableResponseHeaderValidation = false  // HTTPTypes validated the fields
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            return Value(upgradeResult: result, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .stream:
                logger.debug("push stream open")
            case .notUpgraded(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http):
                await writeRefusal(http, logger: logger)
            }
        } catch let error as ChannelError where error == .inputClosed {
            logger.trace("the connection closed before its first request")
        } catch {
            logger.debug("a connection ended before its first request was answered: \(error)")
        }
    }

    /// Answers a refused upgrade with 400; `RefusedUpgradeWriter` puts the refusal's own answer in its place.
    private func writeRefusal(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, logger: Logger) async {
        do {
            try await http.executeThenClose { _, outbound in
                let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
                try await outbound.write(contentsOf: [.head(head), .end(nil)])
            }
        } catch {
            logger.trace("the refusal of an upgrade was not written: \(error)")
        }
    }

    /// A request that asks for a WebSocket but reached the HTTP path (its `Connection` header does not
    /// say `upgrade`) is sent back to try again, with the connection closed, as Hummingbird does.
    private static func refusingStrayUpgrades(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct StrayUpgrade: Error {}
        return { request, responseWriter, channel in
            guard request.headers[.upgrade] == "websocket" else {
                try await responder(request, responseWriter, channel)
                return
            }
            var path = request.uri.path
            if let query = request.uri.query { path += "?\(query)" }
            let response = HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: path])
            try await responseWriter.writeResponse(response)
            throw StrayUpgrade()
        }
    }
}
