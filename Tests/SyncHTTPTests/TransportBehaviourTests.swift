import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

@Suite("Transport behaviour, over HTTP on a loopback port and in-process")
struct TransportBehaviourTests {
    static func post(_ value: SyncValue, credentials: Credentials?, path: String = "/echo") throws -> SyncRequest {
        SyncRequest(
            method: .post, path: path, contentType: "application/json", credentials: credentials,
            body: try JSONCodec().encode(value))
    }

    @Test("a request reaches the service as the authenticated account", arguments: TransportRoute.allCases)
    func authenticatedRoundTrip(route: TransportRoute) async throws {
        let router = ServiceRouter().mounting(EchoService(), at: "/echo")
        try await route.withTransport(to: router) { transport in
            let response = try await transport.send(
                Self.post(["hello": "wörld", "n": 42], credentials: TransportRoute.ada, path: "/echo/items?after=a%20b"))
            #expect(response.status == 200)
            #expect(response.contentType == "application/json")
            let answer = try JSONCodec().decode(response.body)
            #expect(answer["account"] == "ada")
            #expect(answer["body"] == ["hello": "wörld", "n": 42])
            #expect(answer["mount"] == "/echo")
            #expect(answer["path"] == "/echo/items?after=a%20b")

            let bearer = try await transport.send(Self.post([:], credentials: TransportRoute.bob))
            #expect(bearer.status == 200)
            #expect(try JSONCodec().decode(bearer.body)["account"] == "bob")
        }
    }

    @Test("401 without credentials or with wrong ones; the service never runs", arguments: TransportRoute.allCases)
    func unauthorized(route: TransportRoute) async throws {
        let service = EchoService()
        try await route.withTransport(to: service) { transport in
            for credentials: Credentials? in [
                nil, .basic(username: "ada", password: "wrong"), .basic(username: "eve", password: "secret"),
                .basic(username: "bob", password: "token-of-bob"), .bearer("guess"), .bearer("secret"),
            ] {
                let response = try await transport.send(Self.post(["x": 1], credentials: credentials))
                #expect(response.status == 401, "credentials \(String(describing: credentials))")
                #expect(try JSONCodec().decode(response.body)["error"] == "unauthorized")
            }
        }
        #expect(service.handled.value == 0)
    }

    @Test("413 for a body over the limit; the service never runs", arguments: TransportRoute.allCases)
    func payloadTooLarge(route: TransportRoute) async throws {
        let service = EchoService()
        try await route.withTransport(to: service, maxRequestBytes: 1_000) { transport in
            let big = SyncValue.string(String(repeating: "x", count: 5_000))
            let response = try await transport.send(Self.post(big, credentials: TransportRoute.ada))
            #expect(response.status == 413)
            #expect(try JSONCodec().decode(response.body)["error"] == "payload_too_large")
            #expect(service.handled.value == 0)
            let small = try await transport.send(Self.post("ok", credentials: TransportRoute.ada))
            #expect(small.status == 200)
        }
        #expect(service.handled.value == 1)
    }

    @Test("415 for an unknown content type names every supported type", arguments: TransportRoute.allCases)
    func unsupportedMediaType(route: TransportRoute) async throws {
        try await route.withTransport(to: EchoService()) { transport in
            let request = SyncRequest(
                method: .post, path: "/echo", contentType: "text/csv", credentials: TransportRoute.ada,
                body: Array("a,b".utf8))
            let response = try await transport.send(request)
            #expect(response.status == 415)
            #expect(response.contentType == "application/json")
            let body = try JSONCodec().decode(response.body)
            #expect(body["supported"] == ["application/json", .string(TaggedJSONCodec.mediaType)])
        }
    }

    @Test(
        "Accept chooses the codec of the answer",
        arguments: TransportRoute.allCases,
        [
            (nil, "application/json"),
            ("*/*", "application/json"),
            (TaggedJSONCodec.mediaType, TaggedJSONCodec.mediaType),
            ("image/png, \(TaggedJSONCodec.mediaType)", TaggedJSONCodec.mediaType),
            ("\(TaggedJSONCodec.mediaType);q=0.4, application/json;q=0.9", "application/json"),
            ("image/png", "application/json"),
        ] as [(String?, String)])
    func acceptNegotiation(route: TransportRoute, negotiation: (accept: String?, expected: String)) async throws {
        let (accept, expected) = negotiation
        try await route.withTransport(to: EchoService()) { transport in
            var request = try Self.post([1, 2], credentials: TransportRoute.ada)
            request.accept = accept
            let response = try await transport.send(request)
            #expect(response.status == 200)
            #expect(response.contentType == expected)
            #expect(try JSONCodec().decode(response.body)["body"] == [1, 2])
        }
    }

    @Test("the session travels to the service and back", arguments: TransportRoute.allCases)
    func sessionRoundTrip(route: TransportRoute) async throws {
        try await route.withTransport(to: EchoService()) { transport in
            let first = try await transport.send(Self.post([:], credentials: TransportRoute.ada))
            #expect(try JSONCodec().decode(first.body)["session"] == .null)
            let session = try #require(first.session)
            #expect(session == "new-session")

            var next = try Self.post([:], credentials: TransportRoute.ada)
            next.session = "s-42 with space; and=%"
            let second = try await transport.send(next)
            #expect(try JSONCodec().decode(second.body)["session"] == "s-42 with space; and=%")
            #expect(second.session == "s-42 with space; and=%")
        }
    }

    @Test("404 from the router where nothing is mounted", arguments: TransportRoute.allCases)
    func notFound(route: TransportRoute) async throws {
        let service = EchoService()
        let router = ServiceRouter().mounting(service, at: "/echo")
        try await route.withTransport(to: router) { transport in
            let response = try await transport.send(Self.post([:], credentials: TransportRoute.ada, path: "/echoes"))
            #expect(response.status == 404)
            #expect(try JSONCodec().decode(response.body)["error"] == "not_found")
        }
        #expect(service.handled.value == 0)
    }
}
