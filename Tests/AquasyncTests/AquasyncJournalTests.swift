import Aquasync
import FoundationEssentials
import SyncCore
import SyncJSON
import SyncTesting
import Synchronization
import TestSupport
import Testing

@Suite("Aquasync on the journal: exact conflicts, asking the user, refusals and a full disk, in process and over HTTP")
struct AquasyncJournalTests {
    static let start: Int64 = 1_700_000_000_000
    static let hour: Int64 = 3_600_000

    /// The store key of a note.
    static func key(_ gid: String) -> RecordKey { RecordKey(collection: "aquasync/Note", id: RecordID(gid)) }

    /// The live notes of `device` as gid → text.
    static func notes(_ device: AquasyncClient) async throws -> [String: SyncValue] {
        Dictionary(uniqueKeysWithValues: try await device.objects("Note").map { ($0.gid, $0.fields["text"] ?? .null) })
    }

    /// A note `first` made and both devices synced; `first` then edits it to "first" and syncs, and
    /// `second` (asking the user) edits it to "second" without syncing.
    static func editedOnBoth(_ harness: AquasyncHarness, through transport: any SyncClientTransport, secondStore: any SyncStore = MemoryStore())
        async throws -> (first: AquasyncClient, second: AquasyncClient, gid: String)
    {
        let firstClock = TestClock(wallTime: .milliseconds(start))
        let secondClock = TestClock(wallTime: .milliseconds(start))
        let first = harness.client(.json, clock: firstClock, through: transport)
        let second = harness.client(.json, clock: secondClock, through: transport, conflictPolicy: .askUser, store: secondStore)
        let gid = try await first.save("Note", fields: ["text": "base"])
        try await first.sync()
        try await second.sync()
        firstClock.wallTime = .milliseconds(start + 10_000)
        secondClock.wallTime = .milliseconds(start + 20_000)
        try await first.save("Note", gid: gid, fields: ["text": "first"])
        try await first.sync()
        try await second.save("Note", gid: gid, fields: ["text": "second"])
        return (first, second, gid)
    }

    /// Syncs every device twice, in turn.
    static func settle(_ devices: AquasyncClient...) async throws {
        for _ in 0..<2 { for device in devices { try await device.sync() } }
    }

    // MARK: a. Asking the user

    @Test("asking the user: the conflict waits with base, local and remote; each answer converges every device",
          arguments: [ConflictAnswer.keepMine, .takeTheirs, .keepBoth], TransportRoute.allCases)
    func askTheUser(answer: ConflictAnswer, route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let (first, second, gid) = try await Self.editedOnBoth(harness, through: transport)
            let report = try await second.sync()
            #expect(report.openConflicts == 1)
            #expect(report.pushed == 0)
            let conflict = try #require(try await second.store.openConflicts(for: second.account).first)
            #expect(conflict.key == Self.key(gid))
            #expect(conflict.base?.fields == ["text": "base"])
            #expect(conflict.local.fields == ["text": "second"])
            #expect(conflict.remote.fields == ["text": "first"])
            #expect(conflict.localAction == .modify)
            #expect(conflict.localTime == .milliseconds(Self.start + 20_000))
            #expect(conflict.remoteTime == .milliseconds(Self.start + 10_000))
            // While it waits the local edit stays, and nothing of it reaches the server.
            #expect(try await second.object("Note", gid: gid)?.fields["text"] == "second")
            #expect(try await second.object("Note", gid: gid)?.isDirty == true)
            #expect(try await second.sync().pushed == 0)
            try await first.sync()
            #expect(try await first.object("Note", gid: gid)?.fields["text"] == "first")

            try await second.store.answerConflict(conflict.id, with: answer, for: second.account)
            try await Self.settle(second, first)
            let onFirst = try await Self.notes(first)
            #expect(onFirst == (try await Self.notes(second)))
            switch answer {
            case .keepMine: #expect(onFirst == [gid: "second"])
            case .takeTheirs: #expect(onFirst == [gid: "first"])
            default:
                #expect(onFirst[gid] == "first")
                #expect(Set(onFirst.values) == ["first", "second"])
            }
            #expect(try await second.store.openConflicts(for: second.account).isEmpty)
            #expect(try await second.sync() == AquasyncClient.Report())
        }
    }

    @Test("a device's policy gets the ArchCopy as base, with the model's fields only, beside the flat local and remote versions")
    func policySeesBase() async throws {
        let harness = AquasyncHarness()
        let seen = Mutex<Conflict?>(nil)
        let recording = DeferredPolicy { conflict in
            seen.withLock { $0 = conflict }
            return .takeRemote
        }
        let firstClock = TestClock(wallTime: .milliseconds(Self.start))
        let first = harness.client(.json, clock: firstClock)
        let second = harness.client(.json, clock: TestClock(wallTime: .milliseconds(Self.start)), conflictPolicy: recording)
        let gid = try await first.save("Note", fields: ["text": "base"])
        try await first.sync()
        try await second.sync()
        firstClock.wallTime = .milliseconds(Self.start + 10_000)
        try await first.save("Note", gid: gid, fields: ["text": "first"])
        try await first.sync()
        try await second.save("Note", gid: gid, fields: ["text": "second"])
        #expect(try await second.sync().pulled == 1)
        let conflict = try #require(seen.withLock { $0 })
        #expect(conflict.base?.fields == ["text": "base"])
        #expect(conflict.local.fields["text"] == "second")
        #expect(conflict.remote.fields["localTimestamp"] == .integer(Self.start + 10_000))
        #expect(try await Self.notes(second) == [gid: "first"])
    }

    // MARK: b. A restart

    @Test("an unanswered conflict is kept in the device's store: a new client on it sees it and can answer it",
          arguments: TransportRoute.allCases)
    func conflictKeptInTheStore(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let store = MemoryStore()
            let (first, second, gid) = try await Self.editedOnBoth(harness, through: transport, secondStore: store)
            #expect(try await second.sync().openConflicts == 1)
            try await Self.answerAfterRestart(
                harness, first: first, gid: gid, before: try await store.openConflicts(for: second.account),
                restarted: harness.client(.json, through: transport, conflictPolicy: .askUser, store: store))
        }
    }

    /// A device made anew on the store of one that had a conflict open (`before`) still has it,
    /// and answering it `keepMine` converges both devices on its edit.
    static func answerAfterRestart(
        _ harness: AquasyncHarness, first: AquasyncClient, gid: String, before: [SyncConflict], restarted: AquasyncClient
    ) async throws {
        #expect(before.count == 1)
        #expect(try await restarted.store.openConflicts(for: restarted.account) == before)
        #expect(try await restarted.sync().openConflicts == 1)
        try await restarted.store.answerConflict(key(gid).description, with: .keepMine, for: restarted.account)
        try await settle(restarted, first)
        #expect(try await notes(first) == [gid: "second"])
        #expect(try await notes(restarted) == [gid: "second"])
    }

    // MARK: c. Skewed clocks

    /// Two devices whose clocks are `skew` hours ahead and behind, both asking the user, sharing a note.
    static func skewedDevices(_ harness: AquasyncHarness, skew: Int64, through transport: any SyncClientTransport)
        async throws -> (a: AquasyncClient, b: AquasyncClient, gid: String)
    {
        let a = harness.client(
            .json, clock: TestClock(wallTime: .milliseconds(start + skew * hour)), through: transport, conflictPolicy: .askUser)
        let b = harness.client(
            .json, clock: TestClock(wallTime: .milliseconds(start - skew * hour)), through: transport, conflictPolicy: .askUser)
        let gid = try await a.save("Note", fields: ["text": "base"])
        try await a.sync()
        try await b.sync()
        return (a, b, gid)
    }

    /// What the two devices of a skew test do to their shared note.
    enum Edits: String, CaseIterable, Sendable {
        /// Both edit it, to different texts, before either syncs.
        case bothEdit
        /// `a` edits it and syncs, `b` syncs and only then edits it.
        case editAfterSync
        /// Both write the same text before either syncs.
        case sameValue
    }

    @Test("with clocks skewed by hours either way, a conflict is found exactly when both devices changed a record to different values",
          arguments: Edits.allCases, TransportRoute.allCases)
    func exactWhateverTheSkew(edits: Edits, route: TransportRoute) async throws {
        for skew: Int64 in [5, -5] {
            try await exact(edits, skew: skew, route: route)
        }
    }

    /// One case of ``exactWhateverTheSkew(edits:route:)``: `a`'s clock `skew` hours ahead, `b`'s as far behind.
    func exact(_ edits: Edits, skew: Int64, route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let (a, b, gid) = try await Self.skewedDevices(harness, skew: skew, through: transport)
            try await a.save("Note", gid: gid, fields: ["text": edits == .sameValue ? "same" : "from a"])
            if edits == .editAfterSync {
                try await a.sync()
                try await b.sync()
            }
            let text: SyncValue = edits == .sameValue ? "same" : "from b"
            try await b.save("Note", gid: gid, fields: ["text": text])
            #expect(try await a.sync().openConflicts == 0)
            let report = try await b.sync()
            if edits == .bothEdit {
                #expect(report.openConflicts == 1)
                let conflict = try #require(try await b.store.openConflicts(for: b.account).first)
                #expect(conflict.base?.fields == ["text": "base"])
                #expect(conflict.remote.fields == ["text": "from a"])
                return
            }
            #expect(report.openConflicts == 0)
            #expect(report.pushed == (edits == .sameValue ? 0 : 1))
            #expect(try await b.object("Note", gid: gid)?.isDirty == false)
            #expect(try await a.sync().openConflicts == 0)
            #expect(try await Self.notes(a) == [gid: text])
            #expect(try await Self.notes(b) == [gid: text])
        }
    }

    // MARK: d. A refusal for one record

    static let noSecrets = RecordValidation { record in
        record.fields["text"] == "secret" ? "notes cannot hold secrets" : nil
    }

    @Test("a record the server's validation refuses leaves the journal with the reason; the others reach the server",
          arguments: TransportRoute.allCases)
    func oneRecordRefused(route: TransportRoute) async throws {
        var harness = AquasyncHarness()
        harness.validation = Self.noSecrets
        try await harness.withTransport(route) { transport in
            let device = harness.client(.json, through: transport)
            let kept = [try await device.save("Note", fields: ["text": "one"]), try await device.save("Note", fields: ["text": "two"])]
            let refused = try await device.save("Note", fields: ["text": "secret"])
            let report = try await device.sync()
            #expect(report.pushed == 2)
            #expect(report.refused == [Self.key(refused): "notes cannot hold secrets"])
            #expect(try await device.object("Note", gid: refused)?.isDirty == false)

            let reader = harness.client(.json, through: transport)
            try await reader.sync()
            #expect(Set(try await Self.notes(reader).keys) == Set(kept))
            #expect(try await device.sync() == AquasyncClient.Report())
        }
    }

    @Test("the push answer lists a refused delta under refused, and a pack sent again gets the same answer")
    func refusalOnTheWire() async throws {
        var harness = AquasyncHarness()
        harness.validation = Self.noSecrets
        let token = "0f8fad5b-d9cb-469f-a165-70867728950e"
        let secret = "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b"
        let pack: SyncValue = [
            "_id": "9b2e7c4a-1d3f-4a5b-8c6d-7e8f9a0b1c2d",
            "Note": [
                ["gid": .string(secret), "deviceToken": .string(token), "localTimestamp": 5, "text": "secret"],
                ["gid": "7a1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b", "deviceToken": .string(token), "localTimestamp": 5, "text": "fine"],
            ],
        ]
        let refused: SyncValue = [["model": "Note", "gid": .string(secret), "reason": "notes cannot hold secrets"]]
        // The first answer also says the stored delta is the account's newest change; the answer to the same
        // pack sent again cannot know that any more.
        let first: SyncValue = ["id": "success", "refused": refused, "ustBefore": 0, "latestUST": 1]
        let again: SyncValue = ["id": "success", "refused": refused]
        for expected in [first, again] {
            let answer = try await harness.send(.pushJSON(pack))
            #expect(answer.status == 200)
            #expect(try JSONCodec().decode(answer.body) == expected)
        }
        #expect(try await harness.serverStore.latestPosition(for: harness.account) == ChangePosition(1))
    }

    // MARK: Stores of earlier versions

    @Test("a change an earlier version marked with the isDirty column is journaled on the first sync and reaches the server")
    func legacyDirtyRecordIsPushed() async throws {
        let harness = AquasyncHarness()
        let store = MemoryStore()
        let gid = "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b"
        let token = "0f8fad5b-d9cb-469f-a165-70867728950e"
        try await store.transaction(for: "device") { tx in
            try await tx.put(
                SyncRecord(
                    collection: "aquasync/Note", id: RecordID(gid),
                    fields: [
                        "gid": .string(gid), "deviceToken": .string(token), "localTimestamp": .integer(Self.start),
                        "isDeleted": false, "text": "written before the journal", "isDirty": true,
                    ],
                    version: RecordVersion(modifiedAt: .milliseconds(Self.start), node: PeerID(token))))
        }
        let device = harness.client(.json, store: store)
        #expect(try await device.object("Note", gid: gid)?.isDirty == true)
        #expect(try await device.sync().pushed == 1)
        let reader = harness.client(.json)
        try await reader.sync()
        #expect(try await Self.notes(reader) == [gid: "written before the journal"])
        let pushed = try #require(try await device.object("Note", gid: gid))
        #expect(pushed.fields == ["text": "written before the journal"])
        #expect(!pushed.isDirty)
        #expect(try await device.sync().pushed == 0)
    }
}
