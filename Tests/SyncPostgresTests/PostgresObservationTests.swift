import Aquasync
import SyncCore
import SyncJSON
import SyncPostgres
import SyncTesting
import TestSupport
import Testing

/// Observing a device's typed records kept in PostgreSQL: a local save and a pull each make a value.
@Suite(
    "typed records observed on a PostgresStore",
    .enabled("no PostgreSQL server could be started (reason on standard error)") { await TestPostgresServer.isAvailable })
struct PostgresObservationTests {
    struct Contact: SyncModel, Hashable {
        static let modelName = "Contact"
        var id = TimeOrderedUUID.makeID()
        var name: String
    }

    @Test("the records at once, after a local save, and after a pull from another device")
    func observeOnPostgres() async throws {
        try await withTestDatabase { database in
            let server = ServiceRouter().mounting(AquasyncServer(store: MemoryStore(), codecs: CodecSet([JSONCodec()])), at: "/deltas")
            let transport = LoopbackTransport(service: server, authenticator: SingleAccountAuthenticator(account: "ada"))
            let device = AquasyncClient(store: try await database.makeStore(), transport: transport, codec: JSONCodec())
            let other = AquasyncClient(store: MemoryStore(), transport: transport, codec: JSONCodec())

            var values = device.observe(Contact.self).makeAsyncIterator()
            #expect(try await values.next() == [])
            let ada = Contact(name: "Ada")
            try await device.save(ada)
            #expect(try await values.next() == [ada])

            let grace = Contact(name: "Grace")
            try await other.save(grace)
            try await other.sync()
            try await device.sync()
            #expect(try await values.next()?.map(\.name).sorted() == ["Ada", "Grace"])
        }
    }
}
