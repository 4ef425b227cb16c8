import Foundation
import Prometheus
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncTesting
import TestSupport
import Testing

@testable import SyncPush

/// The push stream's WebSocket handshake, refused and granted, over real sockets: the documented
/// status and `Error` body, the login lock, the request metrics.
@Suite("Push stream: refused upgrades")
struct PushStreamRefusalTests {
    static func startServer(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) async throws -> PushTestServer {
        try await PushTestServer.start(
            store: MemoryStore(), loginThrottle: LoginThrottle.Policy(maxFailuresPerAccount: 10, maxFailuresPerAddress: nil),
            observability: ServerObservability(metricsFactory: PrometheusMetricsFactory(registry: registry)))
    }

    /// The answer to a WebSocket handshake for `path` with `authorization` (an `Authorization` value).
    static func handshake(port: Int, path: String, authorization: String?) async throws -> String {
        let connection = try await RawConnection.open(port: port)
        try await connection.send(
            "GET \(path) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + (authorization.map { "Authorization: \($0)\r\n" } ?? "") + "\r\n")
        let answer = await connection.read(until: "\r\n\r\n", within: .seconds(60))
        guard answer.text.hasPrefix("HTTP/1.1 101") else {
            // A refusal closes the connection after its body.
            return await connection.readUntilClosed(within: .seconds(60)).text
        }
        await connection.close()
        return answer.text
    }

    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    static func register(_ server: PushTestServer, device: String, as user: String, password: String = "secret") async throws -> Int {
        let transport = HTTPClientTransport(baseURL: server.url)
        defer { Task { try? await transport.shutdown() } }
        return try await transport.send(
            SyncRequest(
                method: .post, path: "/push/register", contentType: "application/json",
                credentials: .basic(username: user, password: password),
                body: Array(#"{"deviceToken": "\#(device)", "collections": ["aquasync/Contact"]}"#.utf8))
        ).status
    }

    static func count(_ status: Int, in registry: PrometheusCollectorRegistry) -> Double {
        let text = registry.emitToString()
        let series = #"anchorage_http_requests_total{stack="other",status="\#(status)"}"#
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1)) ?? .nan
        }
        return 0
    }

    @Test("each refused upgrade gets the documented status and Error body; a registered device gets 101; all are counted")
    func refusals() async throws {
        let registry = PrometheusCollectorRegistry()
        let server = try await Self.startServer(registry: registry)
        #expect(try await Self.register(server, device: "phone", as: "ada") == 200)
        func count(_ status: Int) -> Double { Self.count(status, in: registry) }
        let before = (count(401), count(404), count(400), count(101))
        let port = server.port

        let anonymous = try await Self.handshake(port: port, path: "/push/stream?deviceToken=phone", authorization: nil)
        #expect(anonymous.hasPrefix("HTTP/1.1 401 "), "\(anonymous)")
        #expect(anonymous.contains("WWW-Authenticate: Basic realm=\"anchorage\"\r\n"), "\(anonymous)")
        #expect(anonymous.contains(#""error":"unauthorized""#))
        #expect(anonymous.contains("X-Request-ID: "))

        let wrong = try await Self.handshake(port: port, path: "/push/stream?deviceToken=phone", authorization: Self.basic("ada", "nope"))
        #expect(wrong.hasPrefix("HTTP/1.1 401 "), "\(wrong)")

        let unregistered = try await Self.handshake(
            port: port, path: "/push/stream?deviceToken=tablet", authorization: Self.basic("ada", "secret"))
        #expect(unregistered.hasPrefix("HTTP/1.1 404 "), "\(unregistered)")
        #expect(unregistered.contains(#""error":"not_found""#))
        #expect(unregistered.contains("POST /push/register first"))

        let malformed = try await Self.handshake(
            port: port, path: "/push/stream?deviceToken=a%20b", authorization: Self.basic("ada", "secret"))
        #expect(malformed.hasPrefix("HTTP/1.1 400 "), "\(malformed)")
        #expect(malformed.contains(#""error":"bad_request""#))

        let elsewhere = try await Self.handshake(port: port, path: "/deltas/from:0", authorization: Self.basic("ada", "secret"))
        #expect(elsewhere.hasPrefix("HTTP/1.1 400 "), "\(elsewhere)")
        #expect(elsewhere.contains("only GET /push/stream upgrades to a WebSocket"))

        let granted = try await Self.handshake(port: port, path: "/push/stream?deviceToken=phone", authorization: Self.basic("ada", "secret"))
        #expect(granted.hasPrefix("HTTP/1.1 101 "), "\(granted)")

        #expect(count(401) - before.0 == 2)
        #expect(count(404) - before.1 == 1)
        #expect(count(400) - before.2 == 1, "the malformed token; the other path is refused before the responder")
        #expect(count(101) - before.3 == 1)
        await server.stop()
    }

    @Test("the login lock counts wrong passwords on the upgrade, and a lock from elsewhere holds on the upgrade")
    func loginLock() async throws {
        let server = try await Self.startServer()
        #expect(try await Self.register(server, device: "phone", as: "ada") == 200)
        #expect(try await Self.register(server, device: "phone", as: "bob") == 200)
        let port = server.port

        // Ten wrong passwords on the stream lock Ada, for the stream and for everything else.
        for attempt in 1...10 {
            let answer = try await Self.handshake(
                port: port, path: "/push/stream?deviceToken=phone", authorization: Self.basic("ada", "wrong"))
            #expect(answer.hasPrefix("HTTP/1.1 401 "), "attempt \(attempt): \(answer)")
        }
        let locked = try await Self.handshake(
            port: port, path: "/push/stream?deviceToken=phone", authorization: Self.basic("ada", "secret"))
        #expect(locked.hasPrefix("HTTP/1.1 429 "), "\(locked)")
        #expect(locked.contains("Retry-After: "))
        #expect(try await Self.register(server, device: "phone", as: "ada") == 429)
        let transport = HTTPClientTransport(baseURL: server.url)
        let sync = try await transport.send(
            SyncRequest(method: .get, path: "/deltas/from:0", credentials: .basic(username: "ada", password: "secret")))
        #expect(sync.status == 429, "a sync of the locked account")

        // Ten wrong passwords on registration lock Bob, and his stream is not opened.
        for _ in 1...10 { #expect(try await Self.register(server, device: "phone", as: "bob", password: "wrong") == 401) }
        let bobLocked = try await Self.handshake(
            port: port, path: "/push/stream?deviceToken=phone", authorization: Self.basic("bob", "secret"))
        #expect(bobLocked.hasPrefix("HTTP/1.1 429 "), "\(bobLocked)")
        await server.stop()
    }
}
