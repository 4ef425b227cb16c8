import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// What goes over the wire, seen with a plain AsyncHTTPClient request.
@Suite("HTTP headers on the wire")
struct HTTPWireTests {
    static func withServer<Result: Sendable>(
        _ service: any SyncService = EchoService(), _ body: (URL) async throws -> Result
    ) async throws -> Result {
        try await HTTPSyncServer.withRunningServer(
            service: service, authenticator: TransportRoute.defaultAuthenticator, body)
    }

    static func get(_ url: String, headers: [(String, String)] = []) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return response
    }

    @Test("401 carries the Basic challenge, for missing, unreadable and wrong credentials")
    func challenge() async throws {
        try await Self.withServer { baseURL in
            for authorization in [nil, "Basic !!!", "Digest abc", "Basic " + Data("ada:nope".utf8).base64EncodedString()] {
                let response = try await Self.get(
                    "\(baseURL)/echo", headers: authorization.map { [("Authorization", $0)] } ?? [])
                #expect(response.status == .unauthorized, "Authorization: \(authorization ?? "none")")
                #expect(response.headers["WWW-Authenticate"] == ["Basic realm=\"anchorage\""])
            }
        }
    }

    @Test("a Basic header with a scheme in any case authenticates; the session comes back as a cookie")
    func basicHeaderAndCookie() async throws {
        try await Self.withServer { baseURL in
            let authorization = "basic " + Data("ada:secret".utf8).base64EncodedString()
            let response = try await Self.get(
                "\(baseURL)/echo",
                headers: [("Authorization", authorization), ("Cookie", "theme=dark; ota-session=abc-1")])
            #expect(response.status == .ok)
            #expect(response.headers["Set-Cookie"] == ["ota-session=abc-1; Path=/; HttpOnly"])
            let body = try await response.body.collect(upTo: 1 << 20)
            #expect(try JSONCodec().decode(Array(buffer: body))["session"] == "abc-1")
        }
    }

    @Test("HTTPClientTransport sends Anchorage's User-Agent unless the request names one")
    func userAgent() async throws {
        try await Self.withServer { baseURL in
            let transport = HTTPClientTransport(baseURL: baseURL)
            var request = SyncRequest(method: .get, path: "/echo", credentials: TransportRoute.ada)
            let defaulted = try await transport.send(request)
            #expect(try JSONCodec().decode(defaulted.body)["userAgent"] == .string(AnchorageVersion.userAgent))
            request.userAgent = "custom-client/2"
            let named = try await transport.send(request)
            #expect(try JSONCodec().decode(named.body)["userAgent"] == "custom-client/2")
        }
    }

    @Test("a base URL with a path prefix and a trailing slash keeps the prefix")
    func baseURLWithPath() async throws {
        let router = ServiceRouter().mounting(EchoService(), at: "/sync/echo")
        try await Self.withServer(router) { baseURL in
            let transport = HTTPClientTransport(baseURL: baseURL.appendingPathComponent("sync/"))
            let response = try await transport.send(
                SyncRequest(method: .get, path: "/echo?x=1", credentials: TransportRoute.ada))
            #expect(response.status == 200)
            #expect(try JSONCodec().decode(response.body)["path"] == "/sync/echo?x=1")
        }
    }
}
