import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// One row of the shared table: a request to an ``EchoService`` mounted at `/echo`, and the status it must get.
struct Exchange: Sendable, CustomStringConvertible {
    let name: String
    let request: SyncRequest
    let status: Int
    var description: String { name }

    /// The largest request body the table's servers accept.
    static let maxRequestBytes = 1_000

    static func post(
        _ value: SyncValue, path: String = "/echo", credentials: Credentials? = TransportRoute.ada,
        accept: String? = nil, session: String? = nil
    ) -> SyncRequest {
        SyncRequest(
            method: .post, path: path, contentType: "application/json", accept: accept, credentials: credentials,
            session: session, userAgent: "anchorage-tests", body: (try? JSONCodec().encode(value)) ?? [])
    }

    static let table: [Exchange] = [
        Exchange(name: "JSON round trip with a password", request: post(["hello": "wörld", "n": 42]), status: 200),
        Exchange(
            name: "GET with a bearer token and a query",
            request: SyncRequest(
                method: .get, path: "/echo/items?after=a%20b&n=2", credentials: TransportRoute.bob,
                userAgent: "anchorage-tests"),
            status: 200),
        Exchange(
            name: "DELETE", request: SyncRequest(
                method: .delete, path: "/echo/items/7", credentials: TransportRoute.ada, userAgent: "anchorage-tests"),
            status: 200),
        Exchange(name: "no credentials", request: post([:], credentials: nil), status: 401),
        Exchange(name: "wrong password", request: post([:], credentials: .basic(username: "ada", password: "guess")), status: 401),
        Exchange(name: "unknown account", request: post([:], credentials: .basic(username: "eve", password: "secret")), status: 401),
        Exchange(name: "unknown token", request: post([:], credentials: .bearer("token-of-eve")), status: 401),
        Exchange(name: "body over the limit", request: post(.string(String(repeating: "x", count: 5_000))), status: 413),
        Exchange(
            name: "unknown content type",
            request: SyncRequest(
                method: .post, path: "/echo", contentType: "text/csv", credentials: TransportRoute.ada,
                body: Array("a,b".utf8)),
            status: 415),
        Exchange(
            name: "body the codec cannot read",
            request: SyncRequest(
                method: .post, path: "/echo", contentType: "application/json", credentials: TransportRoute.ada,
                body: Array("{".utf8)),
            status: 400),
        Exchange(name: "nothing mounted at the path", request: post([:], path: "/nowhere"), status: 404),
        Exchange(name: "Accept picks the other codec", request: post([1], accept: TaggedJSONCodec.mediaType), status: 200),
        Exchange(
            name: "Accept with qualities", request: post([2], accept: "\(TaggedJSONCodec.mediaType);q=0.5, application/json"),
            status: 200),
        Exchange(name: "session continued", request: post([:], session: "s-42 with space;=%"), status: 200),
    ]
}

@Suite("Shared table: the same exchanges over HTTP and in-process")
struct TransportTableTests {
    static let router = ServiceRouter().mounting(EchoService(), at: "/echo")

    @Test("each request gets the same answer over HTTP as through LoopbackTransport", arguments: Exchange.table)
    func sameAnswerBothWays(exchange: Exchange) async throws {
        var answers: [TransportRoute: SyncResponse] = [:]
        for route in TransportRoute.allCases {
            answers[route] = try await route.withTransport(to: Self.router, maxRequestBytes: Exchange.maxRequestBytes) {
                try await $0.send(exchange.request)
            }
        }
        let overHTTP = try #require(answers[.http])
        let inProcess = try #require(answers[.loopback])
        #expect(overHTTP.status == exchange.status)
        #expect(overHTTP == inProcess)
    }
}
