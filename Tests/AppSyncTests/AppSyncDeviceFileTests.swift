import AppSync
import FoundationEssentials
import SyncCore
import SyncSQLite
import SyncTesting
import Testing
import TestSupport

@Suite("appSync on the journal with a device's SQLite file: a restart, a full disk")
struct AppSyncDeviceFileTests {
    /// The device's store on `device.sqlite` in `folder`, taking at most `maximumSize` bytes when given.
    static func deviceStore(in folder: TemporaryFolder, maximumSize: Int? = nil) throws -> SQLiteStore {
        try SQLiteStore(path: folder.path("device.sqlite"), configuration: SQLiteStore.Configuration(maximumSize: maximumSize))
    }

    @Test("an unanswered conflict survives a restart of the device, and answering it afterwards works", arguments: TransportRoute.allCases)
    func conflictSurvivesRestart(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        let folder = try TemporaryFolder("appsync-device")
        try await harness.withTransport(route) { transport in
            let before = try Self.deviceStore(in: folder)
            let devices = try await TwoDevices(harness, transport, storeOfB: before)
            try await devices.editBoth(harness)
            #expect(try await devices.b.sync().openConflicts == 1)
            try before.close()

            let after = try Self.deviceStore(in: folder)
            let b = harness.noteDevice(transport, store: after)
            let conflict = try #require(try await after.openConflicts(for: b.account).first)
            #expect(conflict.local.fields == ["title": "from B"])
            #expect(conflict.remote.fields == ["title": "from A"])
            #expect(conflict.base?.fields == ["title": "base"])
            try await after.answerConflict(conflict.id, with: .keepMine, for: b.account)
            #expect(try await b.sync().openConflicts == 0)
            try await devices.a.sync()
            let notes = try await expectConverged(harness, [devices.a, b])
            #expect(notes.map { $0.fields["title"] } == ["from B"])
            try after.close()
        }
    }

    /// The most a small device store takes, and a title that does not fit in it.
    static let smallStore = 256 * 1_024
    static let tooLarge = SyncValue.string(String(repeating: "x", count: 400_000))

    @Test("a full disk during a local write: a clear storageFull error, and neither the object nor a journal entry is stored")
    func fullDiskOnSave() async throws {
        let harness = AppSyncHarness()
        let folder = try TemporaryFolder("appsync-device")
        let store = try Self.deviceStore(in: folder, maximumSize: Self.smallStore)
        let device = harness.noteDevice(harness.loopback(), store: store)
        let small = try await device.save("note", fields: ["title": "fits"])
        let error = await #expect(throws: StoreError.self) {
            try await device.save("note", guid: "LARGE", fields: ["title": Self.tooLarge])
        }
        #expect(error?.code == .storageFull)
        #expect(try await device.object("note", guid: "LARGE") == nil)
        #expect(try await pendingChanges(of: device).map(\.key.id) == [RecordID(small)])
        #expect(try await device.sync().uploaded == 1)
        try store.close()
    }

    @Test("a full disk during a sync's apply stops the sync with storageFull; reopened with room, the next sync converges with nothing lost or doubled", arguments: TransportRoute.allCases)
    func fullDiskDuringSync(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        let folder = try TemporaryFolder("appsync-device")
        try await harness.serverSave(guid: "LARGE", fields: ["title": Self.tooLarge], type: "note")
        try await harness.withTransport(route) { transport in
            let small = try Self.deviceStore(in: folder, maximumSize: Self.smallStore)
            let device = harness.noteDevice(transport, store: small)
            let mine = try await device.save("note", fields: ["title": "mine"])
            let error = await #expect(throws: StoreError.self) { try await device.sync() }
            #expect(error?.code == .storageFull)
            #expect(try await device.object("note", guid: "LARGE") == nil)
            #expect(try await pendingChanges(of: device).count == 1)
            try small.close()

            let roomy = try Self.deviceStore(in: folder)
            let reopened = harness.noteDevice(transport, store: roomy)
            let report = try await reopened.sync()
            #expect(report.downloaded == 1)
            #expect(report.uploaded == 1)
            let notes = try await expectConverged(harness, [reopened])
            #expect(Set(notes.map(\.guid)) == ["LARGE", mine])
            try roomy.close()
        }
    }
}
