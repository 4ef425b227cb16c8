import Aquasync
import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// The typed API of the Aquasync client: `SyncModel` values saved, synced and read on another device.
@Suite("Aquasync: typed models through the server, in every codec, in process and over HTTP")
struct AquasyncModelTests {
    struct Contact: SyncModel, Hashable {
        static let modelName = "Contact"
        var id = TimeOrderedUUID.makeID()
        var name: String
        var born: Date?
        var tags: [String] = []
        var nickname: String?
    }

    /// An older app's view of a contact: no tags, no nickname.
    struct OldContact: SyncModel {
        static let modelName = "Contact"
        var id: String
        var name: String
        var born: Date?
    }

    @Test("save, list, read by id and delete; what an older app does not know survives its save", arguments: TestCodec.allCases, TransportRoute.allCases)
    func typedRoundTrip(codec: TestCodec, route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let clock = TestClock()
            let phone = harness.client(codec, clock: clock, through: transport)
            let laptop = harness.client(codec, through: transport)
            let born = Date(timeIntervalSince1970: -4_857_494_400)
            let ada = Contact(name: "Ada", born: born, tags: ["maths"], nickname: "Enchantress")
            try await phone.save(ada)
            try await phone.save(Contact(name: "Charles"))
            try await phone.sync()
            try await laptop.sync()
            #expect(try await laptop.model(Contact.self, id: ada.id) == ada)
            #expect(try await laptop.all(Contact.self).map(\.name).sorted() == ["Ada", "Charles"])

            // The laptop runs an older app: it renames Ada, knowing nothing of tags or nickname.
            var old = try #require(try await laptop.model(OldContact.self, id: ada.id))
            old.name = "Ada Lovelace"
            try await laptop.save(old)
            try await laptop.sync()
            clock.wallTime = .milliseconds(1_800_000_000_000)
            try await phone.sync()
            let renamed = try #require(try await phone.model(Contact.self, id: ada.id))
            #expect(renamed.name == "Ada Lovelace")
            #expect(renamed.tags == ["maths"] && renamed.nickname == "Enchantress" && renamed.born == born)

            try await phone.delete(Contact.self, id: ada.id)
            try await phone.sync()
            try await laptop.sync()
            #expect(try await laptop.model(Contact.self, id: ada.id) == nil)
            #expect(try await laptop.all(Contact.self).map(\.name) == ["Charles"])
        }
    }

    /// A model that declares one of Aquasync's sync columns as a property.
    struct Stamped: SyncModel {
        static let modelName = "Contact"
        var id = TimeOrderedUUID.makeID()
        var name: String
        var localTimestamp: Int64
    }

    @Test("the stack's version columns are not fields: a model that declares one is refused, and nothing is saved")
    func versionColumnsAreTheStacks() async throws {
        let device = AquasyncHarness().client(.json)
        let stamped = Stamped(name: "Ada", localTimestamp: 1)
        await #expect(throws: AquasyncValidationError.self) { try await device.save(stamped) }
        #expect(try await device.all(Contact.self).isEmpty)
        // The version is the stack's, read through the dictionary API.
        let ada = Contact(name: "Ada")
        try await device.save(ada)
        #expect(try await device.object("Contact", gid: ada.id)?.localTimestamp ?? 0 > 0)
    }

    @Test("a field the type cannot read is an error naming the record and the field")
    func unreadableField() async throws {
        let harness = AquasyncHarness()
        let device = harness.client(.json)
        let gid = try await device.save("Contact", fields: ["name": 42])
        let error = await #expect(throws: ModelDecodingError.self) { try await device.model(Contact.self, id: gid) }
        #expect(error?.field == "name" && error?.id == gid)
    }
}
