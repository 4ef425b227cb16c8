import Foundation
import OTASync
import SyncCore
import SyncSQLite
import SyncTesting
import TestSupport
import Testing

/// The device side of OTA on the journal: exact conflicts and ask-the-user, refusals of one record,
/// and a full disk, in process and over HTTP.
@Suite("OTA on the journal")
struct OTAJournalTests {
    /// A server whose policy keeps its own version and sends it back: the device judges it.
    static func serverKeepingItsVersion(validation: RecordValidation = .acceptAll) -> OTAHarness {
        OTAHarness(policy: .serverWins, validation: validation)
    }

    /// The key of a contact in the device's journal.
    static func key(_ luid: String) -> RecordKey { RecordKey(collection: CollectionID(Dataclass.contacts), id: RecordID(luid)) }

    /// Ada on the phone and the laptop, then edited on both: the laptop's edit reaches the server first.
    /// - Returns: the phone's LUID of Ada and the laptop's.
    static func editedOnBoth(phone: Device, laptop: Device) async throws -> (phone: String, laptop: String) {
        let (luid, laptopID) = try await adaOnBoth(phone: phone, laptop: laptop)
        try await laptop.records.save(dataclass: Dataclass.contacts, luid: laptopID, entity: Dataclass.contact, fields: ["first name": "Ada (laptop)"])
        try await laptop.sync()
        try await phone.records.save(dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["first name": "Ada (phone)"])
        return (luid, laptopID)
    }

    /// Ada, added on the phone, synced to the laptop.
    /// - Returns: the phone's LUID of Ada and the laptop's.
    static func adaOnBoth(phone: Device, laptop: Device) async throws -> (phone: String, laptop: String) {
        let luid = try await phone.add(["first name": "Ada"])
        try await phone.sync()
        try await laptop.sync()
        return (luid, try #require(try await laptop.records.records(dataclass: Dataclass.contacts).keys.first))
    }

    /// Syncs the devices in turn until a round brings nothing.
    static func settle(_ devices: Device...) async throws {
        for _ in 0..<3 {
            var moved = 0
            for device in devices {
                let report = try await device.sync()
                moved += report.sentItems + report.receivedItems
            }
            if moved == 0 { return }
        }
    }

    // MARK: a. Ask the user

    @Test("a conflict asked of the user: reported with base, local and remote; each answer converges every device",
          arguments: TransportRoute.allCases, ["mine", "theirs", "both", "mine (FLD)", "both (FLD)"])
    func askTheUser(route: TransportRoute, answer: String) async throws {
        let harness = Self.serverKeepingItsVersion()
        try await harness.withTransport(route) { transport in
            let clock = TestClock(wallTime: Date(timeIntervalSince1970: 1_800_000_000))
            let itemType: OTAItemType = answer.hasSuffix("(FLD)") ? .changes : .records
            let phone = harness.device("phone", through: transport, itemType: itemType, conflictPolicy: .askUser, clock: clock.wall)
            let laptop = harness.device("laptop", through: transport, itemType: itemType)
            let (luid, _) = try await Self.editedOnBoth(phone: phone, laptop: laptop)
            let report = try await phone.sync()
            #expect(report.conflicts == 1 && report.openConflicts == 1)

            let conflict = try #require(try await phone.records.store.openConflicts(for: harness.account).first)
            #expect(conflict.key == Self.key(luid))
            #expect(conflict.base?.fields == ["first name": "Ada"])
            #expect(conflict.local.fields == ["first name": "Ada (phone)"])
            #expect(conflict.remote.fields == ["first name": "Ada (laptop)"])
            #expect(conflict.localAction == .modify && conflict.localTime == clock.wallTime)
            // Until the answer, the record holds the phone's version and nothing more goes up.
            #expect(try await phone.records.records(dataclass: Dataclass.contacts)[luid]?.fields == ["first name": "Ada (phone)"])
            #expect(try await phone.sync().sentItems == 0)

            let choice: ConflictAnswer = answer.hasPrefix("mine") ? .keepMine : answer == "theirs" ? .takeTheirs : .keepBoth
            try await phone.records.store.answerConflict(conflict.id, with: choice, for: harness.account)
            try await Self.settle(phone, laptop)

            let expected: [[String: SyncValue]] =
                switch choice {
                case .keepMine: [["first name": "Ada (phone)"]]
                case .takeTheirs: [["first name": "Ada (laptop)"]]
                default: [["first name": "Ada (laptop)"], ["first name": "Ada (phone)"]]
                }
            #expect(try await phone.contents().map(\.fields) == expected)
            #expect(try await laptop.contents() == phone.contents())
            #expect(sorted(try await harness.serverRecords(Dataclass.contacts)) == (try await phone.contents()))
            #expect(try await phone.records.store.openConflicts(for: harness.account).isEmpty)
        }
    }

    // MARK: b. A restart

    @Test("an unanswered conflict survives a restart of the device, and answering it afterwards works",
          arguments: TransportRoute.allCases)
    func conflictSurvivesRestart(route: TransportRoute) async throws {
        let folder = try TemporaryFolder("ota-journal")
        let path = folder.path("phone.sqlite")
        let harness = Self.serverKeepingItsVersion()
        try await harness.withTransport(route) { transport in
            var store = try SQLiteStore(path: path)
            let phone = harness.device("phone", through: transport, store: store, conflictPolicy: .askUser)
            let laptop = harness.device("laptop", through: transport)
            let (luid, _) = try await Self.editedOnBoth(phone: phone, laptop: laptop)
            #expect(try await phone.sync().openConflicts == 1)
            let before = try await store.openConflicts(for: harness.account)
            try store.close()

            store = try SQLiteStore(path: path)
            let restarted = harness.device("phone", through: transport, store: store, conflictPolicy: .askUser)
            #expect(try await store.openConflicts(for: harness.account) == before)
            try await store.answerConflict(Self.key(luid).description, with: .keepMine, for: harness.account)
            try await Self.settle(restarted, laptop)
            #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["first name": "Ada (phone)"]])
            #expect(try await laptop.contents() == restarted.contents())
            #expect(try await store.openConflicts(for: harness.account).isEmpty)
            try store.close()
        }
    }

    // MARK: c. Skewed clocks

    /// Device clocks hours apart, both ways.
    static let skews: [(phone: Double, laptop: Double)] = [(5 * 3_600, -5 * 3_600), (-5 * 3_600, 5 * 3_600)]

    /// Runs `body` with a phone and a laptop whose clocks are `skews[skew]` away from the real time, both
    /// asking the user, syncing by `route` with a server that keeps its version.
    static func withSkewedDevices(
        _ route: TransportRoute, _ skew: Int, _ body: (OTAHarness, Device, Device) async throws -> Void
    ) async throws {
        let harness = serverKeepingItsVersion()
        try await harness.withTransport(route) { transport in
            func device(_ id: String, _ offset: Double) -> Device {
                harness.device(id, through: transport, conflictPolicy: .askUser, clock: TestClock(wallTime: Date().addingTimeInterval(offset)).wall)
            }
            try await body(harness, device("phone", skews[skew].phone), device("laptop", skews[skew].laptop))
        }
    }

    @Test("clocks hours apart: both devices edit the same record → a conflict on the one that syncs second",
          arguments: TransportRoute.allCases, [0, 1])
    func skewedBothEdit(route: TransportRoute, skew: Int) async throws {
        try await Self.withSkewedDevices(route, skew) { harness, phone, laptop in
            _ = try await Self.editedOnBoth(phone: phone, laptop: laptop)
            let report = try await phone.sync()
            #expect(report.conflicts == 1 && report.openConflicts == 1)
            #expect(try await laptop.records.store.openConflicts(for: harness.account).isEmpty)
        }
    }

    @Test("clocks hours apart: one device edits and syncs, the other syncs and only then edits → no conflict",
          arguments: TransportRoute.allCases, [0, 1])
    func skewedEditAfterSync(route: TransportRoute, skew: Int) async throws {
        try await Self.withSkewedDevices(route, skew) { harness, phone, laptop in
            let (luid, laptopID) = try await Self.adaOnBoth(phone: phone, laptop: laptop)
            try await phone.records.save(dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["first name": "Ada King"])
            try await phone.sync()
            try await laptop.sync()
            try await laptop.records.save(
                dataclass: Dataclass.contacts, luid: laptopID, entity: Dataclass.contact, fields: ["first name": "Ada, Countess"])
            let report = try await laptop.sync()
            #expect(report.conflicts == 0 && report.openConflicts == 0)
            #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["first name": "Ada, Countess"]])
            #expect(try await phone.sync().conflicts == 0)
            #expect(try await phone.contents() == laptop.contents())
        }
    }

    @Test("clocks hours apart: the same value written on both sides → no conflict", arguments: TransportRoute.allCases, [0, 1])
    func skewedSameValue(route: TransportRoute, skew: Int) async throws {
        try await Self.withSkewedDevices(route, skew) { harness, phone, laptop in
            let (luid, laptopID) = try await Self.adaOnBoth(phone: phone, laptop: laptop)
            try await laptop.records.save(dataclass: Dataclass.contacts, luid: laptopID, entity: Dataclass.contact, fields: ["first name": "Ada King"])
            try await phone.records.save(dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["first name": "Ada King"])
            #expect(try await laptop.sync().conflicts == 0)
            let report = try await phone.sync()
            #expect(report.conflicts == 0 && report.openConflicts == 0)
            let entries = try await phone.records.store.transaction(for: harness.account) { tx in try await tx.journal.entries() }
            #expect(entries.isEmpty)
            #expect(try await phone.contents() == laptop.contents())
        }
    }

    // MARK: d. A refusal of one record

    @Test("a server refusing one of three edits: its entry leaves the journal and is reported; the others reach the server",
          arguments: TransportRoute.allCases)
    func refusalOfOneRecord(route: TransportRoute) async throws {
        let harness = OTAHarness(validation: RecordValidation { $0.fields["first name"] == "Mallory" ? "no Mallory here" : nil })
        try await harness.withTransport(route) { transport in
            let phone = harness.device("phone", through: transport)
            try await phone.sync()
            try await phone.add(["first name": "Ada"])
            let mallory = try await phone.add(["first name": "Mallory"])
            try await phone.add(["first name": "Grace"])
            let report = try await phone.sync()
            #expect(report.refused == [Self.key(mallory): "no Mallory here"])
            #expect(Set(try await harness.serverRecords(Dataclass.contacts).map { $0.fields["first name"] }) == ["Ada", "Grace"])
            let entries = try await phone.records.store.transaction(for: harness.account) { tx in try await tx.journal.entries() }
            #expect(entries.isEmpty)
            // The device keeps its record; nothing goes again.
            #expect(try await phone.records.records(dataclass: Dataclass.contacts)[mallory] != nil)
            let next = try await phone.sync()
            #expect(next.sentItems == 0 && next.refused.isEmpty)
        }
    }

    // MARK: e. A full disk

    /// A text of 2,000 characters, so a small database fills after a hundred records or so.
    static let long = SyncValue.string(String(repeating: "x", count: 2_000))

    @Test("a local write on a full disk fails as storageFull and leaves neither the record nor its journal entry")
    func localWriteOnFullDisk() async throws {
        let folder = try TemporaryFolder("ota-journal")
        let store = try SQLiteStore(path: folder.path("phone.sqlite"), configuration: .init(maximumSize: 256 * 1024))
        let phone = OTAHarness().device("phone", store: store)
        var failure: StoreError?
        var failed = ""
        for index in 0..<1_000 where failure == nil {
            failed = "L-\(index)"
            do {
                try await phone.records.save(dataclass: Dataclass.contacts, luid: failed, entity: Dataclass.contact, fields: ["note": Self.long])
            } catch let error as StoreError {
                failure = error
            }
        }
        #expect(failure?.code == .storageFull)
        let records = try await phone.records.records(dataclass: Dataclass.contacts)
        #expect(records[failed] == nil)
        let entries = try await store.transaction(for: "ada") { tx in try await tx.journal.entries() }
        #expect(!entries.contains { $0.key == Self.key(failed) })
        #expect(entries.count == records.count)
        try store.close()
    }

    @Test("a sync whose applies do not fit stops with storageFull; reopened with room, the next sync converges with nothing lost or doubled",
          arguments: TransportRoute.allCases)
    func syncOnFullDisk(route: TransportRoute) async throws {
        let folder = try TemporaryFolder("ota-journal")
        let path = folder.path("phone.sqlite")
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
            let laptop = harness.device("laptop", through: transport)
            for index in 0..<200 { try await laptop.add(["note": Self.long, "index": .integer(Int64(index))]) }
            try await laptop.sync()

            var store = try SQLiteStore(path: path, configuration: .init(maximumSize: 256 * 1024))
            var phone = harness.device("phone", through: transport, store: store)
            try await phone.add(["first name": "made on the small phone"])
            await #expect { try await phone.sync() } throws: { ($0 as? StoreError)?.code == .storageFull }
            try store.close()

            store = try SQLiteStore(path: path, configuration: .init(maximumSize: 64 * 1024 * 1024))
            phone = harness.device("phone", through: transport, store: store)
            try await Self.settle(phone, laptop)
            #expect(try await phone.contents().count == 201)
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 201)
            #expect(try await laptop.contents() == phone.contents())
            #expect(try await laptop.contents().filter { $0.fields["first name"] == "made on the small phone" }.count == 1)
            try store.close()
        }
    }
}
