import Aquasync
import FoundationEssentials
import SyncCore
import SyncSQLite
import SyncTesting
import TestSupport
import Testing

@Suite("Aquasync on the journal with the device on a SQLite file: a restart and a full disk")
struct AquasyncJournalStorageTests {
    // MARK: b. A restart of the device

    @Test("an unanswered conflict survives a restart of the device, and answering it afterwards works",
          arguments: TransportRoute.allCases)
    func conflictSurvivesRestart(route: TransportRoute) async throws {
        let folder = try TemporaryFolder("aquasync-journal")
        let path = folder.path("second.sqlite")
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            var store = try SQLiteStore(path: path)
            let (first, second, gid) = try await AquasyncJournalTests.editedOnBoth(harness, through: transport, secondStore: store)
            #expect(try await second.sync().openConflicts == 1)
            let before = try await store.openConflicts(for: second.account)
            try store.close()

            store = try SQLiteStore(path: path)
            try await AquasyncJournalTests.answerAfterRestart(
                harness, first: first, gid: gid, before: before,
                restarted: harness.client(.json, through: transport, conflictPolicy: .askUser, store: store))
            try store.close()
        }
    }

    // MARK: e. A full disk

    /// A text of 2,000 characters, so a small database fills after a hundred notes or so.
    static let long = SyncValue.string(String(repeating: "x", count: 2_000))

    @Test("a local write on a full disk fails as storageFull and leaves neither the record nor its journal entry")
    func localWriteOnFullDisk() async throws {
        let folder = try TemporaryFolder("aquasync-journal")
        let store = try SQLiteStore(path: folder.path("device.sqlite"), configuration: .init(maximumSize: 256 * 1024))
        let device = AquasyncHarness().client(.json, store: store)
        _ = try await device.deviceToken()
        var failure: StoreError?
        var failedGid = ""
        for _ in 0..<1_000 where failure == nil {
            failedGid = UUID().uuidString.lowercased()
            do {
                try await device.save("Note", gid: failedGid, fields: ["text": Self.long])
            } catch let error as StoreError {
                failure = error
            }
        }
        #expect(failure?.code == .storageFull)
        #expect(try await device.object("Note", gid: failedGid) == nil)
        let entries = try await store.transaction(for: device.account) { tx in try await tx.journal.entries() }
        #expect(!entries.contains { $0.key == AquasyncJournalTests.key(failedGid) })
        #expect(entries.count == (try await device.objects("Note")).count)
        try store.close()
    }

    @Test("a sync whose pulled records do not fit stops with storageFull; after reopening with room it converges",
          arguments: TransportRoute.allCases)
    func syncOnFullDisk(route: TransportRoute) async throws {
        let folder = try TemporaryFolder("aquasync-journal")
        let path = folder.path("device.sqlite")
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let writer = harness.client(.json, through: transport)
            for index in 0..<200 { try await writer.save("Note", fields: ["text": Self.long, "index": .integer(Int64(index))]) }
            try await writer.sync()

            var store = try SQLiteStore(path: path, configuration: .init(maximumSize: 256 * 1024))
            var device = harness.client(.json, through: transport, store: store)
            let local = try await device.save("Note", fields: ["text": "made on the small device"])
            await #expect { try await device.sync() } throws: { ($0 as? StoreError)?.code == .storageFull }
            try store.close()

            store = try SQLiteStore(path: path, configuration: .init(maximumSize: 64 * 1024 * 1024))
            device = harness.client(.json, through: transport, store: store)
            try await AquasyncJournalTests.settle(device, writer)
            let onDevice = try await device.objects("Note")
            #expect(onDevice.count == 201)
            #expect(Set(onDevice.map(\.gid)).count == 201)
            #expect(try await AquasyncJournalTests.notes(writer) == (try await AquasyncJournalTests.notes(device)))
            #expect(try await writer.object("Note", gid: local)?.fields["text"] == "made on the small device")
            try store.close()
        }
    }
}
