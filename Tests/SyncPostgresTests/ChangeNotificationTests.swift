import SyncCore
import SyncPostgres
import TestSupport
import Testing

@Suite(
    "PostgresStore announces each commit to every store on the database",
    .enabled("no PostgreSQL server could be started (reason on standard error)") { await TestPostgresServer.isAvailable })
struct ChangeNotificationTests {
    @Test("another store's commit arrives with its account, its collections and the device it was written for")
    func commitArrivesWithCollectionsAndDevice() async throws {
        try await withTestDatabase { database in
            // A schema and a channel of this test's own: every other test's stores announce on the default channel.
            let schema = TestDatabase.freshSchemaName()
            let writer = try await database.makeStore(schema: schema, notificationChannel: schema)
            let listener = try await database.makeStore(schema: schema, notificationChannel: schema)
            var changes = try await listener.changeNotifications().makeAsyncIterator()
            try await StoreChange.$writer.withValue("phone \"7\"/ü") {
                try await writer.transaction(for: "ada") { tx in
                    try await tx.put(note("n1", ["text": "one"]))
                    try await tx.put(note("c1", collection: "contacts"))
                }
            }
            let change = try #require(await changes.next())
            #expect(change.account == "ada")
            #expect(change.collections == ["notes", "contacts"])
            #expect(change.device == "phone \"7\"/ü")
        }
    }
}
