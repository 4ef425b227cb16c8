import Foundation
import OTASync
import SyncCore
import SyncTesting
import TestSupport
import Testing

@Suite("OTA sync, in process and over HTTP")
struct OTASyncTests {
    @Test("a first sync is slow and a later one fast; changes travel both ways", arguments: TestCodec.allCases, TransportRoute.allCases)
    func slowThenFast(codec: TestCodec, route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
            let phone = harness.device("phone", codec: codec, through: transport)
            let laptop = harness.device("laptop", codec: codec, through: transport)
            let ada = try await phone.add(["first name": "Ada", "age": 36])
            try await phone.add(["title": "Standup"], in: Dataclass.calendars)
            let first = try await phone.sync()
            #expect(first.modes[Dataclass.contacts] == .slow)
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 1)

            try await laptop.sync()
            #expect(try await laptop.contents() == phone.contents())
            #expect(try await laptop.contents(Dataclass.calendars).count == 1)

            let laptopID = try #require(try await laptop.records.records(dataclass: Dataclass.contacts).keys.first)
            try await laptop.records.save(
                dataclass: Dataclass.contacts, luid: laptopID, entity: Dataclass.contact, fields: ["first name": "Ada L."])
            let laptopReport = try await laptop.sync()
            #expect(laptopReport.modes[Dataclass.contacts] == .fast)
            let phoneReport = try await phone.sync()
            #expect(phoneReport.modes[Dataclass.contacts] == .fast)
            #expect(try await phone.records.records(dataclass: Dataclass.contacts)[ada]?.fields == ["first name": "Ada L."])
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 1)
        }
    }

    @Test("a fast sync of changes in three dataclasses is one round trip, both ways", arguments: TestCodec.allCases, TransportRoute.allCases)
    func fastSyncIsOneRoundTrip(codec: TestCodec, route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
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

    @Test("plists travel as the patent's media types, the other codecs as their own", arguments: TestCodec.allCases, TransportRoute.allCases)
    func mediaTypes(codec: TestCodec, route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
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
}
