import Foundation
import Synchronization
import SyncCore
import SyncHTTP
import SyncJSON
import Testing

/// Answers `POST /echo` with the decoded body, the account and the session; counts the requests it handles.
struct EchoService: SyncService {
    let codecs = CodecSet([JSONCodec()])
    let handled = HandledCounter()

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        handled.increment()
        let (input, output) = try codecs.negotiate(contentType: request.contentType, accept: request.accept)
        let body = request.body.isEmpty ? SyncValue.null : try input.decode(request.body)
        let answer: SyncValue = [
            "account": .string(context.account.rawValue), "body": body, "mount": .string(context.mountPath),
            "session": request.session.map(SyncValue.string) ?? .null,
        ]
        return try .encoded(answer, with: output, session: request.session ?? "new-session")
    }
}

final class HandledCounter: Sendable {
    private let count = Synchronization.Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}



/// The same exchanges, checked over real HTTP and in-process.
enum Route: String, CaseIterable, CustomStringConvertible {
    case http, loopback
    var description: String { rawValue }
}

@Suite("HTTP transport: Hummingbird server and AsyncHTTPClient client on a loopback port")
struct HTTPTransportTests {
    static let users = try! UsersFile().adding(account: "ada", password: "secret", iterations: 1_000)
        .addingToken(account: "bob", token: "token-of-bob")

    /// Runs `body` with a transport to `service`, over HTTP or in-process.
    static func withTransport<R: Sendable>(
        _ route: Route, service: any SyncService, maxRequestBytes: Int = 1 << 20,
        _ body: (any SyncClientTransport) async throws -> R
    ) async throws -> R {
        let authenticator = UsersFileAuthenticator(users: users)
        switch route {
        case .http:
            return try await HTTPSyncServer.withRunningServer(
                service: service, authenticator: authenticator,
                configuration: .init(maxRequestBytes: maxRequestBytes)
            ) { baseURL in
                try await body(HTTPClientTransport(baseURL: baseURL))
            }
        case .loopback:
            return try await body(
                LoopbackTransport(service: service, authenticator: authenticator, maxRequestBytes: maxRequestBytes))
        }
    }

    static func post(_ value: SyncValue, credentials: Credentials?, path: String = "/echo") throws -> SyncRequest {
        SyncRequest(
            method: .post, path: path, contentType: "application/json", credentials: credentials,
            body: try JSONCodec().encode(value))
    }

    @Test("a request reaches the service as the authenticated account", arguments: Route.allCases)
    func roundTrip(route: Route) async throws {
        let service = EchoService()
        let router = ServiceRouter().mounting(service, at: "/echo")
        try await Self.withTransport(route, service: router) { transport in
            let response = try await transport.send(
                Self.post(["hello": "wörld", "n": 42], credentials: .basic(username: "ada", password: "secret")))
            #expect(response.status == 200)
            #expect(response.contentType == "application/json")
            let answer = try JSONCodec().decode(response.body)
            #expect(answer["account"] == "ada")
            #expect(answer["body"] == ["hello": "wörld", "n": 42])
            #expect(answer["mount"] == "/echo")
            #expect(response.session == "new-session")

            let bearer = try await transport.send(Self.post([:], credentials: .bearer("token-of-bob")))
            #expect(try JSONCodec().decode(bearer.body)["account"] == "bob")
        }
    }

    @Test("401 without credentials or with wrong ones; the service never runs", arguments: Route.allCases)
    func unauthorized(route: Route) async throws {
        let service = EchoService()
        try await Self.withTransport(route, service: service) { transport in
            for credentials: Credentials? in [
                nil, .basic(username: "ada", password: "wrong"), .basic(username: "eve", password: "secret"),
                .bearer("guess"),
            ] {
                let response = try await transport.send(Self.post(["x": 1], credentials: credentials))
                #expect(response.status == 401)
            }
        }
        #expect(service.handled.value == 0)
    }

    @Test("413 for a body over the limit; the service never runs", arguments: Route.allCases)
    func payloadTooLarge(route: Route) async throws {
        let service = EchoService()
        try await Self.withTransport(route, service: service, maxRequestBytes: 1_000) { transport in
            let big = SyncValue.string(String(repeating: "x", count: 5_000))
            let response = try await transport.send(Self.post(big, credentials: .basic(username: "ada", password: "secret")))
            #expect(response.status == 413)
            let small = try await transport.send(Self.post("ok", credentials: .basic(username: "ada", password: "secret")))
            #expect(small.status == 200)
        }
        #expect(service.handled.value == 1)
    }

    @Test("415 for an unknown content type names the supported ones", arguments: Route.allCases)
    func unsupportedMediaType(route: Route) async throws {
        try await Self.withTransport(route, service: EchoService()) { transport in
            let request = SyncRequest(
                method: .post, path: "/echo", contentType: "text/csv",
                credentials: .basic(username: "ada", password: "secret"), body: Array("a,b".utf8))
            let response = try await transport.send(request)
            #expect(response.status == 415)
            let body = try JSONCodec().decode(response.body)
            #expect(body["supported"]?.arrayValue?.contains("application/json") == true)
        }
    }

    @Test("400 for a body the codec cannot read, 404 where nothing is mounted", arguments: Route.allCases)
    func clientErrors(route: Route) async throws {
        let router = ServiceRouter().mounting(EchoService(), at: "/echo")
        try await Self.withTransport(route, service: router) { transport async throws in
            let ada = Credentials.basic(username: "ada", password: "secret")
            let broken = SyncRequest(
                method: .post, path: "/echo", contentType: "application/json", credentials: ada, body: Array("{".utf8))
            #expect(try await transport.send(broken).status == 400)
            #expect(try await transport.send(Self.post([:], credentials: ada, path: "/nowhere")).status == 404)
        }
    }

    @Test("the session travels as a cookie and comes back", arguments: Route.allCases)
    func sessionCookie(route: Route) async throws {
        try await Self.withTransport(route, service: EchoService()) { transport in
            var request = try Self.post([:], credentials: .basic(username: "ada", password: "secret"))
            request.session = "s-42 with space"
            let response = try await transport.send(request)
            #expect(try JSONCodec().decode(response.body)["session"] == "s-42 with space")
            #expect(response.session == "s-42 with space")
        }
    }

    @Test("a refused connection is a TransportError")
    func connectionRefused() async throws {
        // Port 9 (discard) on loopback is closed on any test machine that is not a 1980s UNIX host.
        let transport = HTTPClientTransport(
            baseURL: URL(string: "http://127.0.0.1:9")!, configuration: .init(timeout: .seconds(1)))
        await #expect(throws: TransportError.self) {
            try await transport.send(SyncRequest(method: .get, path: "/"))
        }
    }
}

@Suite("Users file")
struct UsersFileTests {
    @Test("render and parse round-trip; passwords and tokens are checked")
    func roundTrip() throws {
        let users = try UsersFile().adding(account: "ada", password: "pässword", iterations: 1_000)
            .addingToken(account: "ci-bot", token: "abc123")
        let parsed = try UsersFile.parse(users.render())
        #expect(parsed == users)
        #expect(parsed.accounts == ["ada", "ci-bot"])
        #expect(parsed.account(for: .basic(username: "ada", password: "pässword")) == "ada")
        #expect(parsed.account(for: .basic(username: "ada", password: "password")) == nil)
        #expect(parsed.account(for: .bearer("abc123")) == "ci-bot")
        #expect(parsed.account(for: .bearer("abc124")) == nil)
        #expect(parsed.removing(account: "ada").accounts == ["ci-bot"])
    }

    @Test("a malformed line is reported with its number")
    func malformedLine() throws {
        let text = "# comment\n\nada:token-sha256:zz\n"
        #expect(throws: UsersFileError(line: 3, "expected account:token-sha256:<64 hex digits>")) {
            try UsersFile.parse(text)
        }
        #expect(throws: UsersFileError.self) { try UsersFile.parse("ada:md5:abc") }
        #expect(throws: UsersFileError.self) { try UsersFile.parse("a b:token-sha256:00") }
    }

    @Test("write is atomic and leaves a file only its owner can read")
    func writeFile() throws {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("users-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: url) }
        let users = try UsersFile().adding(account: "ada", password: "x", iterations: 1_000)
        try users.write(to: url)
        #expect(try UsersFile.load(from: url) == users)
        let permissions = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
    }
}
