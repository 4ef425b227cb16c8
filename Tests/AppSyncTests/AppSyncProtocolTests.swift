import AppSync
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

@Suite("appSync: interleaved uploads, protocol errors")
struct AppSyncProtocolTests {
    @Test("an upload by another client between a download and an upload is neither skipped nor echoed", arguments: TransportRoute.allCases)
    func interleavedUpload(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let b = harness.client(transport, conflictPolicy: ServerWinsPolicy())
            let hook = BeforeUpload { try await b.sync() }
            let a = harness.client(transport.with(hook), conflictPolicy: ServerWinsPolicy())
            let fromA = try await a.save("booking", fields: ["pk": "A", "name": "from A"])
            let fromB = try await b.save("booking", fields: ["pk": "B", "name": "from B"])
            hook.armed = true
            try await a.sync()
            #expect(try await harness.serverObjects().count == 2)
            let next = try await a.sync()
            #expect(try await a.object("booking", guid: fromB)?.fields["name"] == "from B")
            #expect(next.downloaded == 1)
            #expect(next.conflicts == 0)
            #expect(next.uploaded == 0)
            #expect(try await a.object("booking", guid: fromA)?.fields["name"] == "from A")
            let third = try await a.sync()
            #expect(third == AppSyncClient.Report())
        }
    }

    @Test("malformed bodies, wrong field types and unknown types get 400 or 404 with a JSON body and change nothing", arguments: TransportRoute.allCases)
    func protocolErrors(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            func post(_ path: String, _ body: [UInt8]) async throws -> SyncResponse {
                try await transport.send(SyncRequest(method: .post, path: path, contentType: "application/json", body: body))
            }
            let cases: [(String, [UInt8], Int)] = [
                ("/rest/booking/update", Array("{\"objects\": [".utf8), 400),
                ("/rest/booking/update", Array("{\"things\": []}".utf8), 400),
                ("/rest/booking/update", Array("{\"objects\": [{\"guid\": 5, \"timestamp_created\": \"2014-03-20 13:15:00 CET\", \"timestamp_lastupdate\": \"2014-03-20 13:15:00 CET\"}]}".utf8), 400),
                ("/rest/booking/update", Array("{\"objects\": [{\"guid\": \"G\", \"isdeleted\": \"maybe\", \"timestamp_created\": \"2014-03-20 13:15:00 CET\", \"timestamp_lastupdate\": \"2014-03-20 13:15:00 CET\"}]}".utf8), 400),
                ("/rest/booking/update", Array("{\"objects\": [{\"guid\": \"G\", \"timestamp_created\": \"yesterday\", \"timestamp_lastupdate\": \"2014-03-20 13:15:00 CET\"}]}".utf8), 400),
                ("/rest/invoice/update", Array("{\"objects\": []}".utf8), 404),
            ]
            for (path, body, status) in cases {
                let response = try await post(path, body)
                #expect(response.status == status, "\(String(decoding: body, as: UTF8.self))")
                #expect(response.contentType?.hasPrefix("application/json") == true)
                #expect((try? JSONCodec().decode(response.body))?.dictionaryValue != nil)
            }
            let list = try await transport.send(SyncRequest(method: .get, path: "/rest/booking/list/minus-one"))
            #expect(list.status == 400)
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == .start)
        }
    }

    @Test("the seed's timestamp form and ISO 8601 are read alike")
    func seedTimestamps() throws {
        let seed = try AppSyncObject(
            ["guid": "G", "pk": "2014-05-10", "timestamp_created": "2014-03-20 13:15:00 CET",
             "timestamp_lastupdate": "2014-03-20T12:15:00Z"], at: "object")
        #expect(seed.timestampCreated == seed.timestampLastUpdate)
        #expect(seed.fields == ["pk": "2014-05-10"])
    }

    @Test("the server refuses an upload whose primary key another live object holds, and says why", arguments: TransportRoute.allCases)
    func serverRefusesPrimaryKeyClash(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.serverSave(guid: "S", fields: ["pk": "K"])
        let body: SyncValue = [
            "objects": [["guid": "C", "pk": "K", "timestamp_created": "2014-03-20T12:15:00Z", "timestamp_lastupdate": "2014-03-20T12:15:00Z"]]
        ]
        let response = try await harness.withTransport(route) { transport in
            try await transport.send(
                SyncRequest(method: .post, path: "/rest/booking/update", contentType: "application/json", body: try JSONCodec().encode(body)))
        }
        let result = try JSONCodec().decode(response.body)["result"]
        #expect(result?["statuscode"] == "NOK")
        #expect(result?["rejected"]?.arrayValue?.first?["guid"] == "C")
        #expect(result?["rejected"]?.arrayValue?.first?["reason"]?.stringValue?.contains("primary key") == true)
        #expect(try await harness.serverObjects().keys.sorted() == ["S"])
    }
}

/// Runs an action once, right before the next upload passes through.
final class BeforeUpload: SyncClientMiddleware, @unchecked Sendable {
    private let action: @Sendable () async throws -> Void
    var armed = false
    init(_ action: @escaping @Sendable () async throws -> Void) { self.action = action }
    func intercept(_ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse) async throws
        -> SyncResponse
    {
        if armed, request.method == .post {
            armed = false
            try await action()
        }
        return try await next(request)
    }
}
