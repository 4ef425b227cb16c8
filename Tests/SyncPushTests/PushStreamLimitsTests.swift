import Foundation
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncTesting
import TestSupport
import Testing

@testable import SyncPush

/// Push streams under the server's connection limits: a stream that stops answering pings is
/// closed, and a live one is not held to the time limits of HTTP requests.
@Suite("Push streams and connection limits")
struct PushStreamLimitsTests {
    /// Registers `device` for Ada and opens its stream on a raw connection, which answers nothing —
    /// not even a ping.
    static func openSilentStream(_ server: PushTestServer, device: String) async throws -> RawConnection {
        let transport = HTTPClientTransport(baseURL: server.url)
        let registered = try await transport.send(
            SyncRequest(
                method: .post, path: "/push/register", contentType: "application/json",
                credentials: .basic(username: "ada", password: "secret"),
                body: Array(#"{"deviceToken": "\#(device)", "collections": ["aquasync/Contact"]}"#.utf8)))
        #expect(registered.status == 200)
        let stream = try await RawConnection.open(
            port: server.port,
            sending: "GET /push/stream?deviceToken=\(device) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Basic YWRhOnNlY3JldA==\r\n\r\n")
        let upgraded = await stream.read(until: "\r\n\r\n", within: .seconds(60))
        #expect(upgraded.text.hasPrefix("HTTP/1.1 101"))
        return stream
    }

    @Test("a stream that does not answer pings is closed, and requests beside it are served")
    func unansweredPings() async throws {
        var configuration = PushServer.Configuration()
        configuration.streamPingInterval = .milliseconds(500)
        let server = try await PushTestServer.start(store: MemoryStore(), configuration: configuration)
        let silent = try await Self.openSilentStream(server, device: "silent")
        let ending = await silent.readUntilClosed(within: .seconds(60))
        #expect(ending.closed, "the silent stream was closed")
        let health = try await HTTPClientTransport(baseURL: server.url).send(SyncRequest(method: .get, path: "/health"))
        #expect(health.status == 200)
        await server.stop()
    }

    @Test("a stream outlives the time limits of HTTP: they end at its 101")
    func streamOutlivesHTTPLimits() async throws {
        let limits = ConnectionLimits(
            headerTimeout: .milliseconds(300), bodyTimeout: .milliseconds(300), tlsHandshakeTimeout: .milliseconds(300),
            keepAliveTimeout: .milliseconds(300))
        var configuration = PushServer.Configuration()
        configuration.streamPingInterval = .seconds(600)
        let server = try await PushTestServer.start(store: MemoryStore(), configuration: configuration, connections: limits)
        let stream = try await Self.openSilentStream(server, device: "quiet")
        // Pings come every 10 minutes: nothing but HTTP's limits (300 ms each) could close it within 4 seconds.
        let waited = await stream.readUntilClosed(within: .seconds(4))
        #expect(!waited.closed, "the stream is still open after the HTTP limits passed")
        await stream.close()

        // An idle HTTP connection beside it is closed by the same limits.
        let idle = try await RawConnection.open(port: server.port)
        #expect(await idle.readUntilClosed(within: .seconds(60)).closed)
        await server.stop()
    }
}
