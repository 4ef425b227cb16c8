#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Hummingbird
public import HummingbirdCore
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
/// The server starts accepting connections once the push server is ready (it
/// listens to the store from the first registration on, which it answers once
/// it listens), so every commit from then on reaches every registered device.
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
    /// Waits for the push server to be ready (``PushServer/waitUntilListening()``) before accepting connections.
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
        let http1 = base.http1Configuration(adding: [ExpectContinueHandler(), RefusedUpgradeWriter(refusals)])
        return base.serverBuilder { httpResponder in
            PushStreamChannel(responder: httpResponder, http1: http1, maxFrameSize: 4_096, server: push) { head, channel in
                let request = SyncRequest(method: .get, path: head.path ?? "/")
                guard head.method == .get, request.pathWithoutQuery == streamPath else {
                    let refusal = SyncServiceError.badRequest(
                        "only GET \(streamPath) upgrades to a WebSocket; send this request without Upgrade")
                    logger.info("\(head.method.rawValue) \(request.pathWithoutQuery) 400 (a WebSocket upgrade on another path)")
                    refusals.keep(refusal.response, for: channel)
                    return nil
                }
                let answer = await responder.answerUpgrade(head, remoteAddress: channel.remoteAddress)
                guard answer.isGranted, let account = answer.account,
                    let (device, after) = try? PushServer.streamParameters(request.queryItems)
                else {
                    refusals.keep(head: answer.head, body: answer.body, for: channel)
                    return nil
                }
                // From the 101 on, the WebSocket's pings decide whether the connection lives, not HTTP's time limits.
                ConnectionLimits.connectionUpgraded(channel)
                return PushStreamChannel.Grant(key: PushHub.Key(account: account, device: device), after: after)
            }
        }
    }

    /// Reports the port as the base server does.
    public func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
    }
}
