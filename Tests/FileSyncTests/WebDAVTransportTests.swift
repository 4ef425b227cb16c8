import FileSync
import Foundation
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncTesting
import Synchronization
import TestSupport
import Testing

/// `WebDAVHTTPTransport` on the shared engine: SyncHTTP's transport, client middleware, a RetryPolicy
/// deciding by the failure's class, trust roots, and an injected clock.
@Suite("WebDAV: the transport on the shared client engine")
struct WebDAVTransportTests {
    /// Answers each request with the next status of a script (207 with a one-item listing once it runs out),
    /// and remembers what it was sent.
    final class ScriptedService: SyncService {
        private let state: Mutex<(statuses: [Int], seen: [SyncRequest])>
        let retryAfter: Duration?

        init(_ statuses: [Int], retryAfter: Duration? = nil) {
            state = Mutex((statuses, []))
            self.retryAfter = retryAfter
        }

        var seen: [SyncRequest] { state.withLock { $0.seen } }

        func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
            let status = state.withLock { state in
                state.seen.append(request)
                return state.statuses.isEmpty ? nil : state.statuses.removeFirst()
            }
            if let status { return SyncResponse(status: status, retryAfter: retryAfter, body: Array("not now".utf8)) }
            if request.method.rawValue == "PROPFIND" {
                let xml = """
                    <?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/a.txt</d:href>\
                    <d:propstat><d:prop><d:resourcetype/><d:getetag>"1"</d:getetag></d:prop>\
                    <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>
                    """
                return SyncResponse(status: 207, contentType: "text/xml", body: Array(xml.utf8))
            }
            return SyncResponse(status: 201)
        }
    }

    /// Four attempts at once, bounded by their count alone: a loaded machine does not cut them short.
    static let quick = RetryPolicy(maxAttempts: 4, initialDelay: .milliseconds(1), jitter: 0, maxElapsed: nil)

    @Test("every attempt passes through the middleware, credentials from CredentialsMiddleware; 503 is sent again")
    func middlewareAndRetry() async throws {
        let service = ScriptedService([503, 503])
        try await HTTPSyncServer.withRunningServer(service: service, authenticator: TransportRoute.defaultAuthenticator) { baseURL in
            let counter = CountingMiddleware()
            let transport = WebDAVHTTPTransport(
                HTTPClientTransport(baseURL: baseURL.appendingPathComponent("dav/")),
                middleware: [CredentialsMiddleware(TransportRoute.ada), counter], retry: Self.quick)
            let item = try await WebDAVClient(transport: transport).item(at: "a.txt")
            #expect(item?.etag == "\"1\"")
            #expect(counter.total.requests == 3 && counter.total.answers == 3)
            #expect(service.seen.count == 3)
            #expect(service.seen.allSatisfy { $0.method.rawValue == "PROPFIND" && $0.path == "/dav/a.txt" })
        }
    }

    @Test("a 500 to a write is not sent again, to a read it is; 507 and 401 never are")
    func retriedByClassAndMethod() async throws {
        for (statuses, method, sends) in [([500], "PUT", 1), ([500], "PROPFIND", 2), ([507], "PROPFIND", 1), ([401], "GET", 1), ([429], "PUT", 2)] {
            let service = ScriptedService(statuses)
            try await HTTPSyncServer.withRunningServer(service: service, authenticator: TransportRoute.defaultAuthenticator) { baseURL in
                let transport = WebDAVHTTPTransport(
                    HTTPClientTransport(baseURL: baseURL.appendingPathComponent("dav/")),
                    middleware: [CredentialsMiddleware(TransportRoute.ada)], retry: Self.quick)
                _ = try await transport.send(WebDAVRequest(method: method, path: "a.txt"))
                #expect(service.seen.count == sends, "\(statuses) to \(method)")
            }
        }
        #expect(WebDAVError(status: 429, method: "PUT", path: "a").code == .rateLimited)
        #expect(WebDAVError(status: 429, method: "PUT", path: "a").failureClass == .retryLater)
    }

    @Test("Retry-After is waited for on the injected clock")
    func retryAfterOnTheClock() async throws {
        let service = ScriptedService([503], retryAfter: .seconds(7))
        try await HTTPSyncServer.withRunningServer(service: service, authenticator: TransportRoute.defaultAuthenticator) { baseURL in
            let clock = TestClock()
            let transport = WebDAVHTTPTransport(
                HTTPClientTransport(baseURL: baseURL.appendingPathComponent("dav/")),
                middleware: [CredentialsMiddleware(TransportRoute.ada)], retry: Self.quick, sleeper: clock)
            let sending = Task { try await transport.send(WebDAVRequest(method: "DELETE", path: "a.txt")) }
            await clock.waitForSleepers(1)
            #expect(service.seen.count == 1)
            clock.advance(by: .seconds(6))
            #expect(service.seen.count == 1)
            clock.advance(by: .seconds(1))
            let answer = try await sending.value
            #expect(answer.status == 201)
            #expect(service.seen.count == 2)
        }
    }

    @Test("a closed port: every method is tried again (nothing reached the server), then one line")
    func closedPort() async throws {
        let (closed, port) = try LoopbackSocket.bind(listening: false)
        defer { close(closed) }
        for method in ["PROPFIND", "PUT"] {
            let counter = CountingMiddleware()
            let transport = WebDAVHTTPTransport(
                HTTPClientTransport(baseURL: URL(string: "http://127.0.0.1:\(port)/dav/")!), middleware: [counter], retry: Self.quick)
            let error = await #expect(throws: WebDAVError.self) {
                try await transport.send(WebDAVRequest(method: method, path: "a.txt", body: .bytes([1])))
            }
            #expect(error?.code == .noAnswer && error?.stopsTheSync == true)
            #expect(error?.detail == "cannot connect to 127.0.0.1:\(port): connection refused")
            #expect(counter.total.requests == 4 && counter.total.failures == 4, "\(method): \(counter.total)")
        }
    }

    @Test("an answer lost after the request went: a read is sent again, a write is not")
    func lostAnswer() async throws {
        for (method, sends) in [("GET", 2), ("PUT", 1), ("MOVE", 1)] {
            let service = ScriptedService([])
            try await HTTPSyncServer.withRunningServer(service: service, authenticator: TransportRoute.defaultAuthenticator) { baseURL in
                let cut = FaultInjectingMiddleware(plan: .scripted([.cutAfterProcessing]), sleeper: ContinuousClock())
                let transport = WebDAVHTTPTransport(
                    HTTPClientTransport(baseURL: baseURL.appendingPathComponent("dav/")),
                    middleware: [CredentialsMiddleware(TransportRoute.ada), cut], retry: Self.quick)
                if sends == 1 {
                    let error = await #expect(throws: WebDAVError.self) {
                        try await transport.send(WebDAVRequest(method: method, path: "a.txt"))
                    }
                    #expect(error?.code == .noAnswer)
                } else {
                    let answer = try await transport.send(WebDAVRequest(method: method, path: "a.txt"))
                    #expect(answer.status == 201)
                }
                #expect(service.seen.count == sends, "\(method)")
            }
        }
    }

    @Test("https: a transport trusting the server's authority syncs; one that does not fails at once with tlsFailed")
    func trustRoots() async throws {
        let certificates = try await TestCertificates.make()
        let service = ScriptedService([])
        let tls = try HTTPSyncServer.TLS(certificateChainFile: certificates.certificateFile, privateKeyFile: certificates.keyFile)
        try await HTTPSyncServer.withRunningServer(
            service: service, authenticator: TransportRoute.defaultAuthenticator, configuration: .init(tls: tls)
        ) { baseURL in
            guard case .basic(let user, let password) = TransportRoute.ada else { return }
            let trusting = WebDAVHTTPTransport(
                baseURL: baseURL.appendingPathComponent("dav/"), username: user, password: password,
                trustRoots: try .certificates(pemFile: certificates.caFile), retry: Self.quick)
            let item = try await finally { try await WebDAVClient(transport: trusting).item(at: "a.txt") } then: {
                try await trusting.shutdown()
            }
            #expect(item?.etag == "\"1\"")

            let distrusting = WebDAVHTTPTransport(
                baseURL: baseURL.appendingPathComponent("dav/"), username: user, password: password,
                trustRoots: try .certificates(pemFile: certificates.otherCAFile), retry: Self.quick)
            let error = await #expect(throws: WebDAVError.self) { try await WebDAVClient(transport: distrusting).item(at: "a.txt") }
            try await distrusting.shutdown()
            #expect(error?.code == .tlsFailed && error?.stopsTheSync == true)
            #expect(error?.detail.contains("the server's certificate is not trusted") == true, "\(String(describing: error))")
            #expect(service.seen.count == 1)
        }
    }

    @Test("catch WebDAVError.Code matches the code, and nothing else")
    func codePattern() {
        func caught(_ error: any Error) -> String {
            do { throw error } catch WebDAVError.Code.notFound { return "not found" } catch WebDAVError.Code.changedOnServer {
                return "changed"
            } catch { return "other" }
        }
        #expect(caught(WebDAVError(status: 404, method: "GET", path: "a")) == "not found")
        #expect(caught(WebDAVError(status: 412, method: "PUT", path: "a")) == "changed")
        #expect(caught(WebDAVError(status: 403, method: "PUT", path: "a")) == "other")
        #expect(caught(CancellationError()) == "other")
        #expect(WebDAVError(status: 404, method: "GET", path: "a").description == "GET /a: not found (404)")
    }
}

/// FolderSync's "now" comes from its clock.
@Suite("FolderSync: an injected wall clock")
struct FolderSyncClockTests {
    @Test("a conflict copy's name and a recorded change's time are the clock's")
    func conflictCopyName() async throws {
        let world = try await World()
        let clock = TestClock(wallTime: Date(timeIntervalSince1970: 981_173_106))  // 2001-02-03 04:05:06 UTC
        let folder = world.temporary.path("clocked")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = MemoryStore()
        let device = FolderSync(
            folder: folder, client: WebDAVClient(transport: world.transport()), store: store, account: "ada", device: "pad",
            policy: .keepBoth, clock: clock.wall)
        try await world.put("a.txt", "server one")
        _ = try await device.sync()
        try await world.put("a.txt", "server two")
        try device.write("a.txt", "mine")
        try await device.scan()
        let entry = try await store.transaction(for: "ada") { tx in
            try await tx.journal.entry(for: RecordKey(collection: FolderSync.collection, id: "a.txt"))
        }
        #expect(entry?.recordedAt == clock.wallTime)
        let report = try await device.sync()
        #expect(report.conflictCopies == ["a (conflict pad 2001-02-03 040506).txt"])
        #expect(device.read("a.txt") == "server two")
        #expect(device.read("a (conflict pad 2001-02-03 040506).txt") == "mine")
    }
}
