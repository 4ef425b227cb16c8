import Foundation
import OTASync
import SyncCore
import SyncTesting
import TestSupport
import Testing

@Suite("OTA sync in process")
struct OTASyncTests {
    @Test("a first sync is slow and a later one fast; changes travel both ways", arguments: TestCodec.allCases)
    func slowThenFast(codec: TestCodec) async throws {
        let harness = OTAHarness()
        let phone = harness.device("phone", codec: codec)
        let laptop = harness.device("laptop", codec: codec)
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
