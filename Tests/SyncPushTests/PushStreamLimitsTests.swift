import Foundation
import SyncCore
import SyncHTTP
import SyncTesting
import TestSupport
import Testing

@testable import SyncPush

/// Push streams under the server's connection limits: a stream that stops answering pings is
/// closed, and a live one is not held to the limits of HTTP requests.
@Suite("Push streams and connection limits")
struct PushStreamLimitsTests {
    @Test("a stream that does not answer pings is closed; a live stream outlasts the HTTP time limits and hears an edit")
    func unansweredPings() async throws {
        var configuration = PushServer.Configuration()
        configuration.streamPingInterval = .milliseconds(1_500)
        let limits = ConnectionLimits(
            headerTimeout: .milliseconds(500), bodyTimeout: .milliseconds(500), tlsHandshakeTimeout: .milliseconds(500),
            keepAliveTimeout: .milliseconds(500))
        let server = try await PushTestServer.start(store: MemoryStore(), configuration: configuration, connections: limits)
        let a = PushDevice(.aquasync, token: "device-a", server: server.url)
        let b = PushDevice(.aquasync, token: "device-b", server: server.url)
        let pushB = b.pushClient(server: server.url)
        let logB = await EventLog.recording(pushB)
        let run = Task { try await pushB.run() }
        defer { run.cancel() }
        try await logB.wait(for: "B's first sync") { $0.isSync(of: "aquasync/Contact", .resync) }

        // A device that opens its stream and then answers nothing, not even a ping.
        let transport = HTTPClientTransport(baseURL: server.url)
        let registered = try await transport.send(
            SyncRequest(
                method: .post, path: "/push/register", contentType: "application/json",
                credentials: .basic(username: "ada", password: "secret"),
                body: Array(#"{"deviceToken": "silent", "collections": ["aquasync/Contact"]}"#.utf8)))
        #expect(registered.status == 200)
        try await transport.shutdown()
        let silent = try await RawConnection.open(port: server.port)
        try await silent.send(
            "GET /push/stream?deviceToken=silent HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Basic YWRhOnNlY3JldA==\r\n\r\n")
        let upgraded = await silent.read(until: "\r\n\r\n", within: .seconds(10))
        #expect(upgraded.text.hasPrefix("HTTP/1.1 101"))
        let ending = await silent.readUntilClosed(within: .seconds(10))
        #expect(ending.closed, "the silent stream was closed")

        // B's stream has lived past the head and keep-alive limits and answered the pings: it hears A's edit.
        try await a.write("Ada Lovelace")
        try await logB.wait(for: "B's sync after A's edit") { $0.isSync(of: "aquasync/Contact", .notified) }
        #expect(await logB.events.contains { $0.isDisconnect } == false, "B's stream stayed open")
        await server.stop()
    }
}
