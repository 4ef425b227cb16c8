import Foundation
import OTASync
import SyncCore
import SyncHTTP
import SyncTesting
import TestSupport
import Testing

@Suite("OTA over real HTTP on a loopback port")
struct OTAHTTPTests {
    /// Runs `body` with the harness's server on a free loopback port and a transport to it as `ada`.
    static func withServer<R: Sendable>(
        _ harness: OTAHarness, _ body: (any SyncClientTransport) async throws -> R
    ) async throws -> R {
        try await HTTPSyncServer.withRunningServer(
            service: ServiceRouter().mounting(harness.server, at: "/ota"),
            authenticator: StaticAuthenticator(passwords: ["ada": "secret"])
        ) { baseURL in
            try await body(
                HTTPClientTransport(baseURL: baseURL).with(CredentialsMiddleware(.basic(username: "ada", password: "secret"))))
        }
    }

    @Test("a fast sync of changes in three dataclasses is one round trip, both ways", arguments: TestCodec.allCases)
    func fastSyncIsOneRoundTrip(codec: TestCodec) async throws {
        let harness = OTAHarness()
        try await Self.withServer(harness) { transport in
            let phoneTraffic = CountingMiddleware()
            let laptopTraffic = CountingMiddleware()
            let phone = harness.device("phone", codec: codec, through: transport.with(phoneTraffic))
            let laptop = harness.device("laptop", codec: codec, through: transport.with(laptopTraffic))
            try await phone.add(["first name": "Ada"])
            try await phone.sync()
            try await laptop.sync()

            for (index, dataclass) in Dataclass.all.enumerated() {
                try await phone.add(["title": .string("change \(index)")], in: dataclass)
            }
            phoneTraffic.reset()
            let pushed = try await phone.sync()
            #expect(phoneTraffic.total.requests == 1)
            #expect(pushed.roundTrips == 1)
            #expect(pushed.sentItems == 3)
            #expect(Set(pushed.modes.values) == [.fast])

            laptopTraffic.reset()
            let pulled = try await laptop.sync()
            #expect(laptopTraffic.total.requests == 1)
            #expect(pulled.receivedItems == 3)
            for dataclass in Dataclass.all {
                #expect(try await laptop.contents(dataclass) == phone.contents(dataclass))
            }
        }
    }

    @Test("plists travel as the patent's media types over HTTP, the other codecs as their own", arguments: TestCodec.allCases)
    func mediaTypes(codec: TestCodec) async throws {
        let harness = OTAHarness()
        try await Self.withServer(harness) { transport in
            let trace = TraceRecorder()
            let phone = harness.device("phone", codec: codec, through: transport.with(trace))
            try await phone.add(["first name": "Ada"])
            try await phone.sync()
            let expected = switch codec {
            case .xmlPlist: "text/xml"
            case .binaryPlist: "application/octet-stream"
            case .json: "application/json"
            case .msgpack: "application/x-msgpack"
            }
            #expect(!trace.exchanges.isEmpty)
            for exchange in trace.exchanges {
                #expect(exchange.request.contentType == expected)
                #expect(exchange.response.contentType?.hasPrefix(expected) == true)
                #expect(exchange.response.session != nil)
            }
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 1)
        }
    }

    @Test("a slow sync of 10,000 records under a 256 KB message limit converges; the next fast sync sends only the changes")
    func slowSyncOfTenThousandRecords() async throws {
        let limit = 256 * 1024
        let harness = OTAHarness(maxMessageBytes: limit)
        try await Self.withServer(harness) { transport in
            let sizes = SizeRecorder()
            let phoneStore = MemoryStore()
            let phone = harness.device(
                "phone", codec: .binaryPlist, through: transport.with(sizes), store: phoneStore, maxMessageBytes: limit)
            let records = OTADeviceRecords(store: phoneStore, account: harness.account)
            try await phoneStore.transaction(for: harness.account) { tx in
                for index in 0..<10_000 {
                    try await tx.put(
                        SyncRecord(
                            collection: CollectionID(Dataclass.contacts), id: RecordID("L\(index)"),
                            fields: OTARecord(
                                entity: Dataclass.contact,
                                fields: ["first name": .string("Person \(index)"), "notes": .string(String(repeating: "n", count: index % 200))]
                            ).storedFields,
                            isDeleted: false, version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000), node: OTADeviceRecords.localNode)))
                }
            }
            let first = try await phone.sync()
            #expect(first.modes[Dataclass.contacts] == .slow)
            #expect(first.sentItems == 10_000)
            #expect(first.roundTrips > 1)
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 10_000)

            let laptop = harness.device("laptop", codec: .xmlPlist, through: transport.with(sizes), maxMessageBytes: limit)
            let received = try await laptop.sync()
            #expect(received.receivedItems == 10_000)
            #expect(try await laptop.contents() == phone.contents())
            #expect(sizes.largestRequest <= limit)
            #expect(sizes.largestAnswer <= limit)

            try await records.save(dataclass: Dataclass.contacts, luid: "L7", entity: Dataclass.contact, fields: ["first name": "Seven"])
            try await records.delete(dataclass: Dataclass.contacts, luid: "L8")
            let fast = try await phone.sync()
            #expect(fast.modes[Dataclass.contacts] == .fast)
            #expect(fast.sentItems == 2)
            #expect(fast.roundTrips == 1)
            let laptopFast = try await laptop.sync()
            #expect(laptopFast.receivedItems == 2)
            #expect(try await laptop.contents() == phone.contents())
            #expect(try await laptop.contents().count == 9_999)
        }
    }
}
