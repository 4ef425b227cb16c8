import AsyncHTTPClient
import Foundation
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncJSON
import SyncTesting
import TestSupport
import Testing

@Suite("HTTPClientTransport: failures to get an answer, and the client's lifetime")
struct HTTPClientTransportFailureTests {
    static func withServer<Result: Sendable>(
        _ service: any SyncService, _ body: (URL) async throws -> Result
    ) async throws -> Result {
        try await HTTPSyncServer.withRunningServer(
            service: service, authenticator: TransportRoute.defaultAuthenticator, body)
    }

    static let ping = SyncRequest(method: .get, path: "/ping", credentials: TransportRoute.ada)

    @Test("an answer that does not come in time is a timed-out TransportError")
    func timeout() async throws {
        let service = HeldService()
        try await Self.withServer(service) { baseURL in
            defer { service.release() }
            let transport = HTTPClientTransport(baseURL: baseURL, configuration: .init(timeout: .milliseconds(200)))
            let error = await #expect(throws: TransportError.self) { try await transport.send(Self.ping) }
            #expect(error?.code == .timedOut)
        }
    }

    @Test("an answer larger than the limit is an invalid-response TransportError")
    func answerTooLarge() async throws {
        try await Self.withServer(LargeAnswerService(size: 10_000)) { baseURL in
            let limited = HTTPClientTransport(baseURL: baseURL, configuration: .init(maxResponseBytes: 1_000))
            let error = await #expect(throws: TransportError.self) { try await limited.send(Self.ping) }
            #expect(error?.code == .invalidResponse)

            let roomy = HTTPClientTransport(baseURL: baseURL, configuration: .init(maxResponseBytes: 10_000))
            let answer = try await roomy.send(Self.ping)
            #expect(answer.body.count == 10_000)
        }
    }

    /// A loopback port bound by a socket that never listens, for as long as `body` runs: a connection
    /// to it is refused, and no server the other tests start can take the port meanwhile (a port a
    /// server has just let go of can be handed to the next one that binds port 0).
    static func withRefusingPort<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
        let (descriptor, port) = try LoopbackSocket.bind(listening: false)
        defer { close(descriptor) }
        return try await body(try #require(URL(string: "http://127.0.0.1:\(port)")))
    }

    @Test("a refused connection is a connection-failed TransportError")
    func connectionRefused() async throws {
        try await Self.withRefusingPort { closedURL in
            // AsyncHTTPClient retries a refused connection until the deadline, and then reports either the
            // refusal or the deadline, whichever its event loop sees first; a client that does not retry
            // reports the refusal itself, every time.
            var once = HTTPClient.Configuration()
            once.connectionPool.retryConnectionEstablishment = false
            let transport = HTTPClientTransport(
                baseURL: closedURL, configuration: .init(timeout: .seconds(30)), clientConfiguration: once)
            let error = await #expect(throws: TransportError.self) { try await transport.send(Self.ping) }
            try await transport.shutdown()
            #expect(error?.code == .connectionFailed)
        }
    }

    @Test("with the default client and retry policy, a closed port is reported in one plain line")
    func closedPortWithDefaults() async throws {
        try await Self.withRefusingPort { closedURL in
            let endpoint = SyncEndpoint(transport: HTTPClientTransport(baseURL: closedURL), codecs: CodecSet([JSONCodec()]))
            // Bounded by RetryPolicy's 20 s and one connect by construction (the time itself is not asserted:
            // a loaded machine stretches it); what the user reads is one plain line.
            let error = await #expect(throws: SyncClientError.self) { try await endpoint.send(Self.ping) }
            #expect(error?.code == .connectionFailed)
            let transportError = error?.underlying as? TransportError
            #expect(transportError?.message == "cannot connect to 127.0.0.1:\(closedURL.port ?? 0): connection refused")
        }
    }

    @Test("a transport with its own client works until shutdown(), then fails with TransportError")
    func ownedClient() async throws {
        try await Self.withServer(EchoService()) { baseURL in
            let transport = HTTPClientTransport(baseURL: baseURL, clientConfiguration: HTTPClient.Configuration())
            #expect(transport.ownsClient)
            let beforeShutdown = try await finally { try await transport.send(Self.ping) } then: { try await transport.shutdown() }
            #expect(beforeShutdown.status == 200)
            await #expect(throws: TransportError.self) { try await transport.send(Self.ping) }
        }
    }

    @Test("shutdown() leaves a shared client running")
    func sharedClient() async throws {
        try await Self.withServer(EchoService()) { baseURL in
            let transport = HTTPClientTransport(baseURL: baseURL)
            #expect(!transport.ownsClient)
            try await transport.shutdown()
            let afterShutdown = try await transport.send(Self.ping)
            #expect(afterShutdown.status == 200)
        }
    }
}
