import Foundation
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncTesting
import TestSupport
import Testing

/// Slow, idle and flooding clients, spoken to with raw sockets: each time limit closes its
/// connection, and an ordinary request beside it is served.
@Suite("Connection limits: slow, idle and flooding clients")
struct ConnectionLimitsTests {
    /// Limits far away, but for the ones a test sets. (The whole suite on two cores stretches a test's
    /// waits tenfold and more: a limit that must not fire is minutes away, a wait for one that must fire
    /// is generous, and only the limit under test is short.)
    static func limits(_ change: (inout ConnectionLimits) -> Void) -> ConnectionLimits {
        var limits = ConnectionLimits(
            headerTimeout: .seconds(600), bodyTimeout: .seconds(600), bodyMinimumRate: 0, tlsHandshakeTimeout: .seconds(600),
            keepAliveTimeout: .seconds(600))
        change(&limits)
        return limits
    }

    static func withServer(
        _ connections: ConnectionLimits, tls: HTTPSyncServer.TLS? = nil, _ body: (_ baseURL: URL, _ port: Int) async throws -> Void
    ) async throws {
        try await HTTPSyncServer.withRunningServer(
            service: EchoService(), authenticator: TransportRoute.defaultAuthenticator,
            configuration: .init(tls: tls, connections: connections)
        ) { baseURL in
            try await body(baseURL, try #require(baseURL.port))
        }
    }

    /// An ordinary request on a connection of its own is answered.
    static func expectServed(port: Int) async throws {
        let ordinary = try await RawConnection.open(port: port, sending: "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        let answer = await ordinary.read(until: "ok\n", within: .seconds(60))
        #expect(answer.text.hasPrefix("HTTP/1.1 200"), "an ordinary request beside the slow one")
        await ordinary.close()
    }

    @Test("half a request head is answered 408 and closed after the head's time; an ordinary request beside it is served")
    func halfHead() async throws {
        try await Self.withServer(Self.limits { $0.headerTimeout = .seconds(2) }) { _, port in
            let slow = try await RawConnection.open(port: port, sending: "GET /health HTTP/1.1\r\nHost: x\r\n")
            try await Self.expectServed(port: port)
            let ending = await slow.readUntilClosed(within: .seconds(60))
            #expect(ending.closed)
            #expect(ending.text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
            #expect(ending.text.contains("\"error\":\"request_timeout\""))
        }
    }

    @Test("a connection that sends nothing is closed after the head's time, without an answer")
    func silentConnection() async throws {
        try await Self.withServer(Self.limits { $0.headerTimeout = .milliseconds(500) }) { _, port in
            let silent = try await RawConnection.open(port: port)
            let ending = await silent.readUntilClosed(within: .seconds(60))
            #expect(ending.closed)
            #expect(ending.text.isEmpty)
        }
    }

    @Test("a trickled body is answered 408 and closed; a body that keeps the minimum rate is given time")
    func trickledBody() async throws {
        let limits = Self.limits {
            $0.bodyTimeout = .milliseconds(500)
            $0.bodyMinimumRate = 100
        }
        try await Self.withServer(limits) { _, port in
            let head = "POST /echo HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YWRhOnNlY3JldA==\r\nContent-Length: 100000\r\n\r\n"
            let trickle = try await RawConnection.open(port: port, sending: head + "0123456789")
            try await Self.expectServed(port: port)
            let ending = await trickle.readUntilClosed(within: .seconds(60))
            #expect(ending.closed)
            #expect(ending.text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))

            // 90,000 bytes at 100 a second earn 900 seconds more: still open 2 seconds later.
            let steady = try await RawConnection.open(port: port, sending: head + String(repeating: "x", count: 90_000))
            let waited = await steady.readUntilClosed(within: .seconds(2))
            #expect(!waited.closed)
            #expect(waited.text.isEmpty)
            await steady.close()
        }
    }

    @Test("an idle kept-alive connection is closed after the keep-alive time, not the head's")
    func idleKeepAlive() async throws {
        try await Self.withServer(Self.limits { $0.keepAliveTimeout = .milliseconds(500) }) { _, port in
            let idle = try await RawConnection.open(port: port, sending: "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            let answered = await idle.read(until: "ok\n", within: .seconds(60))
            #expect(answered.text.hasPrefix("HTTP/1.1 200"))
            let ending = await idle.readUntilClosed(within: .seconds(60))
            #expect(ending.closed)
            #expect(ending.text == answered.text, "nothing more than the answer")
        }
    }

    @Test("a TLS handshake that does not finish is closed after its time; a client that shakes hands is served")
    func tlsHandshake() async throws {
        let certificates = try await TestCertificates.make()
        let tls = try HTTPSyncServer.TLS(certificateChainFile: certificates.certificateFile, privateKeyFile: certificates.keyFile)
        try await Self.withServer(Self.limits { $0.tlsHandshakeTimeout = .seconds(10) }, tls: tls) { baseURL, port in
            let silent = try await RawConnection.open(port: port)
            let transport = HTTPClientTransport(
                baseURL: baseURL, trustRoots: try .certificates(pemFile: certificates.caFile))
            let answer = try await transport.send(SyncRequest(method: .get, path: "/ping", credentials: TransportRoute.ada))
            try await transport.shutdown()
            #expect(answer.status == 200)
            let ending = await silent.readUntilClosed(within: .seconds(60))
            #expect(ending.closed)
        }
    }

    @Test("at the cap of open connections a new one waits until one closes, and is then served")
    func openConnectionCap() async throws {
        try await Self.withServer(Self.limits { $0.maxOpenConnections = 3 }) { _, port in
            var held: [RawConnection] = []
            for _ in 0..<3 {
                let connection = try await RawConnection.open(port: port)
                try await connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await connection.read(until: "ok\n", within: .seconds(60)).text.hasPrefix("HTTP/1.1 200"))
                held.append(connection)
            }
            let waiting = try await RawConnection.open(port: port)
            try await waiting.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            let early = await waiting.read(until: "ok\n", within: .seconds(1))
            #expect(early.text.isEmpty, "not accepted while three are open")
            await held.removeFirst().close()
            let served = await waiting.read(until: "ok\n", within: .seconds(60))
            #expect(served.text.hasPrefix("HTTP/1.1 200"))
            for connection in held + [waiting] { await connection.close() }
        }
    }
}
