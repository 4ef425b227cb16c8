import Foundation
import SyncCore
import SyncHTTP
import SyncHTTPClient
import SyncHTTPServer
import SyncJSON
import SyncTesting
import Synchronization
import TestSupport
import Testing

/// HTTPS in the library: an `HTTPSyncServer` with a certificate, an
/// `HTTPClientTransport` that trusts its authority, and the refusals.
@Suite("HTTPS: HTTPSyncServer with TLS, HTTPClientTransport trusting a private CA")
struct TLSTests {
    static let ping = SyncRequest(method: .get, path: "/ping", credentials: TransportRoute.ada)

    /// Runs `body` with the base URL of an HTTPS server made with `certificates`.
    static func withHTTPSServer<Result: Sendable>(
        _ certificates: TestCertificates, service: any SyncService = EchoService(), _ body: (URL) async throws -> Result
    ) async throws -> Result {
        let tls = try HTTPSyncServer.TLS(
            certificateChainFile: certificates.certificateFile, privateKeyFile: certificates.keyFile)
        return try await HTTPSyncServer.withRunningServer(
            service: service, authenticator: TransportRoute.defaultAuthenticator, configuration: .init(tls: tls), body)
    }

    @Test("a server with TLS answers over https:// a transport that trusts its certificate authority")
    func trustedExchange() async throws {
        let certificates = try await TestCertificates.make()
        let service = EchoService()
        try await Self.withHTTPSServer(certificates, service: service) { baseURL in
            #expect(baseURL.scheme == "https")
            let trustRoots = try HTTPClientTransport.TrustRoots.certificates(pemFile: certificates.caFile)
            #expect(trustRoots.count == 1)
            let transport = HTTPClientTransport(baseURL: baseURL, trustRoots: trustRoots)
            #expect(transport.ownsClient)
            let answer = try await finally { try await transport.send(Self.ping) } then: { try await transport.shutdown() }
            #expect(answer.status == 200)
            #expect(try JSONCodec().decode(answer.body)["account"] == "ada")
            #expect(service.handled.value == 1)

            // The same authority as bytes, and through a SyncEndpoint as a stack uses it.
            let fromBytes = HTTPClientTransport(
                baseURL: baseURL,
                trustRoots: try .certificates(pem: Array(try Data(contentsOf: URL(fileURLWithPath: certificates.caFile)))))
            let endpoint = SyncEndpoint(transport: fromBytes, codecs: CodecSet([JSONCodec()]), retry: .none)
            let echoed = try await finally {
                try await endpoint.send(endpoint.request(.get, "/hello").with(credentials: TransportRoute.ada))
            } then: {
                try await fromBytes.shutdown()
            }
            #expect(echoed.status == 200)
        }
    }

    @Test(
        "a certificate the client does not trust fails at once with tlsFailed, and SyncEndpoint does not retry it",
        arguments: ["system", "other CA"])
    func untrustedCertificate(trusting: String) async throws {
        let certificates = try await TestCertificates.make()
        let service = EchoService()
        try await Self.withHTTPSServer(certificates, service: service) { baseURL in
            let trustRoots: HTTPClientTransport.TrustRoots =
                trusting == "system" ? .system : try .certificates(pemFile: certificates.otherCAFile)
            let transport = HTTPClientTransport(baseURL: baseURL, trustRoots: trustRoots)
            let attempts = AttemptCounter()
            let endpoint = SyncEndpoint(
                transport: transport.with(attempts), codecs: CodecSet([JSONCodec()]),
                retry: RetryPolicy(maxAttempts: 5, initialDelay: .milliseconds(10)))
            let started = ContinuousClock.now
            let error = await #expect(throws: SyncClientError.self) {
                try await endpoint.send(endpoint.request(.get, "/hello").with(credentials: TransportRoute.ada))
            }
            let took = ContinuousClock.now - started
            try await transport.shutdown()
            #expect(error?.code == .tlsFailed)
            #expect(error?.message.contains("the server's certificate is not trusted") == true, "\(String(describing: error))")
            #expect(error?.message.contains("attempts") == false, "not retried: \(String(describing: error))")
            #expect((error?.underlying as? TransportError)?.code == .tlsFailed)
            #expect(attempts.count == 1)
            #expect(took < .seconds(10), "failed at once, not at the time-out: \(took)")
            #expect(service.handled.value == 0)
            #expect(!RetryPolicy.isTransient(try #require(error?.underlying as? TransportError)))
        }
    }

    @Test("a plain-HTTP client of a TLS server, and a TLS client of a plain server, get no answer")
    func mismatchedSchemes() async throws {
        let certificates = try await TestCertificates.make()
        try await Self.withHTTPSServer(certificates) { baseURL in
            var components = try #require(URLComponents(url: baseURL, resolvingAgainstBaseURL: false))
            components.scheme = "http"
            let plain = HTTPClientTransport(baseURL: try #require(components.url), configuration: .init(timeout: .seconds(5)))
            await #expect(throws: TransportError.self) { try await plain.send(Self.ping) }
        }
        try await HTTPSyncServer.withRunningServer(
            service: EchoService(), authenticator: TransportRoute.defaultAuthenticator
        ) { baseURL in
            var components = try #require(URLComponents(url: baseURL, resolvingAgainstBaseURL: false))
            components.scheme = "https"
            let secure = HTTPClientTransport(
                baseURL: try #require(components.url), trustRoots: try .certificates(pemFile: certificates.caFile))
            let error = await #expect(throws: TransportError.self) { try await secure.send(Self.ping) }
            try await secure.shutdown()
            #expect(error?.code == .tlsFailed, "\(String(describing: error))")
        }
    }

    @Test("TLS settings refuse a missing file, PEM without a certificate or key, and a key of another certificate")
    func badSettings() async throws {
        let certificates = try await TestCertificates.make()
        let missing = certificates.folder.path("missing.pem")
        let unreadable = #expect(throws: TLSSettingsError.self) {
            try HTTPSyncServer.TLS(certificateChainFile: missing, privateKeyFile: certificates.keyFile)
        }
        #expect(unreadable?.code == .unreadable)
        #expect(unreadable?.message.contains(missing) == true, "\(String(describing: unreadable))")

        let noCertificate = #expect(throws: TLSSettingsError.self) {
            try HTTPSyncServer.TLS(certificateChainFile: certificates.keyFile, privateKeyFile: certificates.keyFile)
        }
        #expect(noCertificate?.code == .invalid)
        #expect(noCertificate?.message.contains("no PEM certificate") == true, "\(String(describing: noCertificate))")

        let noKey = #expect(throws: TLSSettingsError.self) {
            try HTTPSyncServer.TLS(certificateChainFile: certificates.certificateFile, privateKeyFile: certificates.caFile)
        }
        #expect(noKey?.code == .invalid)

        let mismatched = #expect(throws: TLSSettingsError.self) {
            try HTTPSyncServer.TLS(certificateChainFile: certificates.certificateFile, privateKeyFile: certificates.otherKeyFile)
        }
        #expect(mismatched?.code == .mismatched)
        #expect(
            mismatched?.message
                == "the private key in \(certificates.otherKeyFile) does not belong to the certificate in \(certificates.certificateFile)")

        #expect(throws: TLSSettingsError.self) { try HTTPClientTransport.TrustRoots.certificates(pem: Array("nonsense".utf8)) }
        #expect(throws: TLSSettingsError.self) { try HTTPClientTransport.TrustRoots.certificates(pemFile: missing) }

        // Bytes work as files do.
        let tls = try HTTPSyncServer.TLS(
            certificateChainPEM: Array(try Data(contentsOf: URL(fileURLWithPath: certificates.certificateFile))),
            privateKeyPEM: Array(try Data(contentsOf: URL(fileURLWithPath: certificates.keyFile))))
        #expect(HTTPSyncServer.Configuration(tls: tls).scheme == "https")
        #expect(HTTPSyncServer.Configuration().scheme == "http")
    }

    @Test("only localhost, 127.0.0.0/8 and ::1 count as loopback")
    func loopbackAddresses() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]"] {
            #expect(HTTPSyncServer.Configuration(host: host).isLoopbackOnly, "\(host)")
        }
        for host in ["0.0.0.0", "", "::", "[::]", "192.168.1.2", "10.0.0.1", "sync.example.com", "127.0.0.256", "1270.0.0.1"] {
            #expect(!HTTPSyncServer.Configuration(host: host).isLoopbackOnly, "\(host)")
        }
    }
}

/// Counts the requests that pass, from any task.
private final class AttemptCounter: SyncClientMiddleware {
    private let attempts = Mutex(0)

    var count: Int { attempts.withLock { $0 } }

    func intercept(
        _ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        attempts.withLock { $0 += 1 }
        return try await next(request)
    }
}

extension SyncRequest {
    /// This request with `credentials`.
    fileprivate func with(credentials: Credentials) -> SyncRequest {
        var request = self
        request.credentials = credentials
        return request
    }
}
