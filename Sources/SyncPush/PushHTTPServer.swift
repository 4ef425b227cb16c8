#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Hummingbird
public import HummingbirdCore
import HummingbirdWebSocket
public import Logging
public import NIOCore
import NIOWebSocket
import SyncCore
public import SyncHTTPServer
public import ServiceLifecycle
import Synchronization

/// An ``SyncHTTPServer/HTTPSyncServer`` that also upgrades `GET {mount}/stream` to the
/// push server's WebSocket, and runs the push server's listener beside it.
///
/// `Expect: 100-continue` is answered at once (a mail server's hook sends it
/// with every `POST /push/mail`). Every request — `/push/register`, and the stream's upgrade too —
/// goes to the sync server's responder. A stream request is upgraded only when its
/// credentials prove an account that is not locked and its device is registered for that
/// account; otherwise it is answered as plain HTTP with the status and `Error` body the same
/// request without the upgrade gets (401, 429, 400, 404), and the connection closed.
/// The server starts accepting connections once the push server listens to
/// the store, so every commit from then on is announced.
public struct PushHTTPServer: ApplicationProtocol {
    /// The sync server: its service, authenticator, configuration and responder.
    public let base: HTTPSyncServer
    /// The push server.
    public let push: PushServer
    /// Where the push server is mounted in the base server's router.
    public let mountPath: String
    /// Services that run beside the push server for the server's life (the console's sampling).
    public let companions: [any Service]

    /// Serves `base`, with `push` mounted at `mountPath` in its router.
    /// - Parameter companions: Services run beside the push server, started and stopped with the server.
    public init(_ base: HTTPSyncServer, push: PushServer, mountPath: String = "/push", companions: [any Service] = []) {
        self.base = base
        self.push = push
        self.mountPath = mountPath
        self.companions = companions
    }

    /// The base server's responder.
    public var responder: SyncServiceResponder<SyncRequestContext> { base.responder }
    /// The base server's address.
    public var configuration: ApplicationConfiguration { base.configuration }
    /// The base server's logger.
    public var logger: Logger { base.logger }
    /// The push server's listener, and the ``companions``.
    public var services: [any Service] { [push] + companions }
    /// Waits for the push server to listen before accepting connections.
    public var processesRunBeforeServerStart: [@Sendable () async throws -> Void] {
        [{ [push] in await push.waitUntilListening() }]
    }

    /// HTTP/1.1 with the WebSocket upgrade, under the base server's connection limits, inside TLS when the
    /// base server has it. A stream that stops answering pings is closed after
    /// ``PushServer/Configuration/streamPingInterval``.
    ///
    /// A stream request is answered by the base server's responder
    /// (``SyncHTTPServer/SyncServiceResponder/answerUpgrade(_:remoteAddress:)``): the login lock, the
    /// credentials, the log line and the metrics apply to it as to any request, and the push server
    /// grants the upgrade (`101`) or refuses it with its documented status and `Error` body. An upgrade
    /// asked for on any other path is answered 400.
    public var server: HTTPServerBuilder {
        let (push, responder, logger, streamPath) = (push, base.responder, base.logger, mountPath + "/stream")
        let refusals = UpgradeRefusals()
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: base.http1Configuration(adding: [ExpectContinueHandler(), RefusedUpgradeWriter(refusals)]),
            ws: .init(maxFrameSize: 4_096, autoPing: .enabled(timePeriod: push.configuration.streamPingInterval)))
        return base.serverBuilder { httpResponder in
            HTTP1WebSocketUpgradeChannel(responder: httpResponder, configuration: configuration) { head, channel, _ in
                let request = SyncRequest(method: .get, path: head.path ?? "/")
                guard head.method == .get, request.pathWithoutQuery == streamPath else {
                    let refusal = SyncServiceError.badRequest(
                        "only GET \(streamPath) upgrades to a WebSocket; send this request without Upgrade")
                    logger.info("\(head.method.rawValue) \(request.pathWithoutQuery) 400 (a WebSocket upgrade on another path)")
                    refusals.keep(refusal.response, for: channel)
                    return .dontUpgrade
                }
                let answer = await responder.answerUpgrade(head, remoteAddress: channel.remoteAddress)
                guard answer.isGranted, let account = answer.account,
                    let (device, after) = try? PushServer.streamParameters(request.queryItems)
                else {
                    refusals.keep(head: answer.head, body: answer.body, for: channel)
                    return .dontUpgrade
                }
                let key = PushHub.Key(account: account, device: device)
                // From the 101 on, the WebSocket's pings decide whether the connection lives, not HTTP's time limits.
                ConnectionLimits.connectionUpgraded(channel)
                return .upgrade([:]) { inbound, outbound, _ in
                    try await push.stream(to: key, after: after, inbound: inbound, outbound: outbound)
                }
            }
        }
    }

    /// Reports the port as the base server does.
    public func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
    }
}

extension PushServer {
    /// Sends a device its notifications until either side closes.
    func stream(to key: PushHub.Key, after: UInt64, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        guard let (id, notifications) = await hub.connect(key, after: after) else { return }
        let logger = self.logger
        logger.debug("push stream open", metadata: ["device": "\(key.device)", "account": "\(key.account)"])
        let hub = self.hub
        await withGracefulShutdownHandler {
            await forward(notifications, inbound: inbound, outbound: outbound)
        } onGracefulShutdown: {
            // The server stops: close the stream, so the device reconnects to another one.
            Task { await hub.disconnect(key, id: id) }
        }
        await hub.disconnect(key, id: id)
        logger.debug("push stream closed", metadata: ["device": "\(key.device)", "account": "\(key.account)"])
    }

    /// Writes each notification to the WebSocket until the stream or the device ends.
    private func forward(
        _ notifications: AsyncStream<PushNotification>, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter
    ) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // The device sends nothing; reading notices its close.
                do {
                    for try await _ in inbound {}
                } catch {}
            }
            group.addTask { [self] in
                for await notification in notifications {
                    let text = notification.json
                    do {
                        if cutMidMessage.withLock({ $0?(notification) }) == true {
                            let half = ByteBuffer(string: String(text.prefix(text.count / 2)))
                            try await outbound.write(.custom(WebSocketFrame(fin: false, opcode: .text, data: half)))
                            return
                        }
                        try await outbound.write(.text(text))
                    } catch {
                        return
                    }
                }
            }
            await group.next()
            // Closed from this side: the device answers the close, which ends the reader above; the group
            // waits for that reader, and a reader waiting on the socket does not end on cancellation alone.
            try? await outbound.close(.goingAway, reason: "the stream ended")
            group.cancelAll()
        }
    }
}
