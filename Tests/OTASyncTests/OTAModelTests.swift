import Foundation
import OTASync
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// The typed API over OTA records: `OTAModel` values saved, synced and read on another device, in process
/// and over HTTP.
@Suite("OTA: typed models through the server, in process and over HTTP")
struct OTAModelTests {
    struct Person: OTAModel, Hashable {
        static let dataclass = "com.apple.Contacts"
        static let modelName = "com.apple.contacts.Contact"
        var id = OTADeviceRecords.makeLUID()
        var firstName: String
        var nickname: String?

        enum CodingKeys: String, CodingKey {
            case id, nickname
            case firstName = "first name"
        }
    }

    /// An older app's person: it does not know the nickname.
    struct OldPerson: OTAModel {
        static let dataclass = "com.apple.Contacts"
        static let modelName = "com.apple.contacts.Contact"
        var id: String
        var firstName: String

        enum CodingKeys: String, CodingKey {
            case id
            case firstName = "first name"
        }
    }

    @Test("save, list, read by id, delete and observe; what an older app does not know survives its save", arguments: TransportRoute.allCases)
    func typedRoundTrip(route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
            let phone = harness.device("phone", through: transport)
            let laptop = harness.device("laptop", through: transport)
            let ana = Person(firstName: "Ana", nickname: "Nan")
            try await phone.client.save(ana)
            var observed = phone.client.observe(Person.self).makeAsyncIterator()
            #expect(try await observed.next() == [ana])
            try await phone.sync()
            try await laptop.sync()
            let onLaptop = try await laptop.records.all(Person.self)
            #expect(onLaptop.map(\.firstName) == ["Ana"] && onLaptop.first?.nickname == "Nan")

            // The laptop's older app renames her, knowing nothing of the nickname (the laptop has its own LUIDs).
            var old = try #require(try await laptop.records.all(OldPerson.self).first)
            old.firstName = "Anna"
            try await laptop.records.save(old)
            try await laptop.sync()
            try await phone.sync()
            let renamed = try #require(try await phone.client.model(Person.self, id: ana.id))
            #expect(renamed.firstName == "Anna" && renamed.nickname == "Nan")
            #expect(try await observed.next() == [renamed])

            try await phone.client.delete(Person.self, id: ana.id)
            try await phone.sync()
            try await laptop.sync()
            #expect(try await laptop.records.all(Person.self).isEmpty)
        }
    }
}
