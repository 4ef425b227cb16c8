import AppSync
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// A null field written by a JSON client reaches a client of any codec: a property-list client gets the
/// object without that field (docs/protocols.md: null travels in JSON and MessagePack only).
@Suite("appSync: null fields and property-list clients")
struct AppSyncNullFieldTests {
    @Test("a list answers every codec when an object holds a null field, leaving it out for property lists", arguments: TransportRoute.allCases)
    func nullFieldsInEveryCodec(route: TransportRoute) async throws {
        let server = AppSyncServer(store: MemoryStore(), codecs: TestCodec.all, types: [AppSyncObjectType("booking")])
        try await route.withTransport(
            to: ServiceRouter().mounting(server, at: "/rest"), authenticator: StaticAuthenticator(passwords: ["ada": "secret"]),
            credentials: TransportRoute.ada
        ) { transport in
            let object: SyncValue = [
                "guid": "0191e0c2-7f00-7000-8000-000000000001", "pk": 1, "note": .null, "guest": "Ada",
                "timestamp_created": "2026-01-01T00:00:00Z", "timestamp_lastupdate": "2026-01-01T00:00:00Z", "isdeleted": 0,
            ]
            let upload = try await transport.send(
                SyncRequest(
                    method: .post, path: "/rest/booking/update", contentType: "application/json",
                    body: try JSONCodec().encode(["objects": [object]])))
            try #require(upload.status == 200, "\(String(decoding: upload.body, as: UTF8.self))")
            for codec in TestCodec.allCases {
                let answer = try await transport.send(
                    SyncRequest(method: .get, path: "/rest/booking/list/0", accept: codec.codec.primaryMediaType))
                try #require(answer.status == 200, "\(codec): \(String(decoding: answer.body, as: UTF8.self))")
                let listed = try codec.codec.decode(answer.body)["objects"]?.arrayValue?.first
                #expect(listed?["guest"] == "Ada", "\(codec)")
                #expect(listed?["note"] == (codec.codec.features.contains(.null) ? .null : nil), "\(codec)")
            }
        }
    }
}
