import AppSync
import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// The typed API of the appSync client: `SyncModel` values saved, synced and read on another device.
@Suite("appSync: typed models through the server, in process and over HTTP")
struct AppSyncModelTests {
    struct Booking: SyncModel, Hashable {
        static let modelName = "booking"
        var id = TimeOrderedUUID.makeID()
        var pk: Int
        var guest: String
        var nights: Int?
    }

    /// An older app's booking: it does not know the nights.
    struct OldBooking: SyncModel {
        static let modelName = "booking"
        var id: String
        var pk: Int
        var guest: String
    }

    /// A model that declares one of appSync's protocol fields as a property.
    struct Stamped: SyncModel {
        static let modelName = "booking"
        var id = TimeOrderedUUID.makeID()
        var pk: Int
        var timestamp_lastupdate: Date
    }

    @Test("the stack's version columns are not fields: a model that declares one is refused, and nothing is saved")
    func versionColumnsAreTheStacks() async throws {
        let harness = AppSyncHarness()
        let device = harness.client(harness.loopback(), conflictPolicy: NewestWinsPolicy())
        let error = await #expect(throws: SyncClientError.self) {
            try await device.save(Stamped(pk: 7, timestamp_lastupdate: Date(timeIntervalSince1970: 0)))
        }
        #expect(error?.message.contains("timestamp_lastupdate") == true)
        #expect(try await device.all(Booking.self).isEmpty)
    }

    @Test("save, list, read by id and delete; what an older app does not know survives its save", arguments: TransportRoute.allCases)
    func typedRoundTrip(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let phone = harness.client(transport, conflictPolicy: NewestWinsPolicy())
            let laptop = harness.client(transport, conflictPolicy: NewestWinsPolicy())
            let booking = Booking(pk: 101, guest: "Ada", nights: 3)
            try await phone.save(booking)
            try await phone.sync()
            try await laptop.sync()
            #expect(try await laptop.model(Booking.self, id: booking.id) == booking)

            var old = try #require(try await laptop.model(OldBooking.self, id: booking.id))
            old.guest = "Ada Lovelace"
            try await laptop.save(old)
            try await laptop.sync()
            try await phone.sync()
            let changed = try #require(try await phone.model(Booking.self, id: booking.id))
            #expect(changed.guest == "Ada Lovelace" && changed.nights == 3)

            try await phone.delete(Booking.self, id: booking.id)
            try await phone.sync()
            try await laptop.sync()
            #expect(try await laptop.all(Booking.self).isEmpty)
        }
    }
}
