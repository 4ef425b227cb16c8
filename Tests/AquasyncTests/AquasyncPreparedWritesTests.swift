import Aquasync
import FoundationEssentials
import SyncCore
import SyncSQLite
import SyncTesting
import Testing

/// Writes prepared outside a transaction (`prepare`) and saved later (`save(_:)`), as an import does.
@Suite("Aquasync: writes prepared before their transaction")
struct AquasyncPreparedWritesTests {
    @Test("preparing writes nothing; saving writes and journals each record, with the gids prepared")
    func prepareThenSave() async throws {
        let store = try SQLiteStore.inMemory()
        let records = AquasyncLocalRecords(store: store)
        let given = UUID().uuidString.lowercased()
        let prepared = try await records.prepare("Contact", [(nil, ["name": "Ada"]), (given, ["name": "Grace"])])
        #expect(prepared.count == 2)
        #expect(try await store.latestPosition(for: records.account) == .start)

        let gids = try await records.save(prepared)
        #expect(gids.count == 2 && gids[1] == given)
        let objects = try await records.objects("Contact")
        #expect(Set(objects.map(\.gid)) == Set(gids))
        #expect(objects.filter(\.isDirty).count == 2)
        let entries = try await store.transaction(for: records.account) { tx in try await tx.journal.entries() }
        #expect(entries.count == 2 && entries.allSatisfy { $0.action == .add })
    }

    @Test("a version saved after the preparation is replaced by one stamped after it, never by an older stamp")
    func savedAfterAnEditStaysNewer() async throws {
        let store = try SQLiteStore.inMemory()
        let clock = TestClock()
        let records = AquasyncLocalRecords(store: store, clock: clock.wall)
        let gid = UUID().uuidString.lowercased()
        let prepared = try await records.prepare("Contact", [(gid, ["name": "prepared first"])])
        clock.wallTime += 60  // the other write comes a minute later, and is saved before the prepared one
        try await records.save("Contact", gid: gid, fields: ["name": "written in between"])
        let between = try #require(try await records.object("Contact", gid: gid))

        try await records.save(prepared)
        let saved = try #require(try await records.object("Contact", gid: gid))
        #expect(saved.fields["name"] == "prepared first")
        #expect(saved.localTimestamp == between.localTimestamp + 1)
        let entries = try await store.transaction(for: records.account) { tx in try await tx.journal.entries() }
        #expect(entries.count == 1)
        #expect(try await records.objects("Contact").count == 1)
    }

    @Test("a bad field name is refused by the preparation, before anything is written")
    func refusedWhilePreparing() async throws {
        let store = try SQLiteStore.inMemory()
        let records = AquasyncLocalRecords(store: store)
        await #expect(throws: AquasyncValidationError.self) {
            _ = try await records.prepare("Contact", [(nil, ["name": "Ada"]), (nil, ["_hidden": 1])])
        }
        await #expect(throws: AquasyncValidationError.self) {
            _ = try await records.prepare("Contact", [(String?.some("NOT-A-UUID"), ["name": "Ada"])])
        }
        #expect(try await store.latestPosition(for: records.account) == .start)
    }

    @Test("records prepared for one account are refused by another's, which writes nothing")
    func preparedForAnotherAccount() async throws {
        let store = try SQLiteStore.inMemory()
        let prepared = try await AquasyncLocalRecords(store: store, account: "first").prepare("Contact", [(nil, ["name": "Ada"])])
        let other = AquasyncLocalRecords(store: store, account: "second")
        await #expect(throws: AquasyncValidationError.self) { try await other.save(prepared) }
        #expect(try await other.objects("Contact").isEmpty)
    }
}
