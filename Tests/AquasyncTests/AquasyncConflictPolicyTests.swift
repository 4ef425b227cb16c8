import Aquasync
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

@Suite("Aquasync: conflicts decided by a ConflictPolicy on the server and on the device")
struct AquasyncConflictPolicyTests {
    static let token = "0f8fad5b-d9cb-469f-a165-70867728950e"
    static let greaterToken = "9f8fad5b-d9cb-469f-a165-70867728950e"

    static func record(_ text: String, at milliseconds: Int64, by token: String) -> SyncRecord {
        SyncRecord(
            collection: "aquasync/Note", id: "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b",
            fields: ["text": .string(text), "localTimestamp": .integer(milliseconds), "deviceToken": .string(token)],
            version: RecordVersion(modifiedAt: .milliseconds(milliseconds), node: PeerID(token)))
    }

    @Test("AquasyncNewestWins: the newer localTimestamp, then the greater deviceToken; an equal version stays")
    func seedRule() async {
        let policy = AquasyncNewestWins()
        func resolve(_ local: SyncRecord, _ remote: SyncRecord) async -> Resolution {
            await policy.resolve(Conflict(local: local, remote: remote, resolvingSide: .server))
        }
        let older = Self.record("older", at: 1_000, by: Self.greaterToken)
        let newer = Self.record("newer", at: 1_001, by: Self.token)
        #expect(await resolve(older, newer) == .takeRemote)
        #expect(await resolve(newer, older) == .keepLocal)
        let tieSmall = Self.record("small", at: 1_000, by: Self.token)
        let tieGreat = Self.record("great", at: 1_000, by: Self.greaterToken)
        #expect(await resolve(tieSmall, tieGreat) == .takeRemote)
        #expect(await resolve(tieGreat, tieSmall) == .keepLocal)
        // Same time and device, different content: the version held stays, on either side.
        let again = Self.record("other text", at: 1_000, by: Self.token)
        #expect(await resolve(tieSmall, again) == .keepLocal)
        #expect(await resolve(again, tieSmall) == .keepLocal)
        // Records without the columns compare by version.
        var bare = older
        bare.fields = [:]
        var bareNewer = newer
        bareNewer.fields = [:]
        #expect(await resolve(bare, bareNewer) == .takeRemote)
    }

    /// Two devices that share a note, both of which edited it: `first` earlier (and pushed), `second` later.
    struct Edits {
        let first: AquasyncClient
        let second: AquasyncClient
        let gid: String
    }

    /// A note both devices have; then `first` edits it at +10 s and syncs, `second` edits it at +20 s.
    static func concurrentEdits(_ harness: AquasyncHarness, secondPolicy: any ConflictPolicy = AquasyncNewestWins())
        async throws -> Edits
    {
        let firstClock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
        let secondClock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
        let first = harness.client(.json, clock: firstClock)
        let second = harness.client(.json, clock: secondClock, conflictPolicy: secondPolicy)
        let gid = try await first.save("Note", fields: ["text": "base"])
        try await first.sync()
        try await second.sync()
        firstClock.wallTime = .milliseconds(1_700_000_010_000)
        secondClock.wallTime = .milliseconds(1_700_000_020_000)
        try await first.save("Note", gid: gid, fields: ["text": "first"])
        try await first.sync()
        try await second.save("Note", gid: gid, fields: ["text": "second"])
        return Edits(first: first, second: second, gid: gid)
    }

    /// A note `first` made at +0 s and both devices synced, on one clock now at +10 s: the start of
    /// the server-side policy tests, where `second` edits next.
    static func sharedNote(_ harness: AquasyncHarness) async throws
        -> (first: AquasyncClient, second: AquasyncClient, gid: String, clock: TestClock)
    {
        let clock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
        let first = harness.client(.json, clock: clock)
        let second = harness.client(.json, clock: clock)
        let gid = try await first.save("Note", fields: ["text": "base"])
        try await first.sync()
        try await second.sync()
        clock.wallTime = .milliseconds(1_700_000_010_000)
        return (first, second, gid, clock)
    }

    func serverText(_ harness: AquasyncHarness) async throws -> SyncValue? {
        let answer = try await harness.send(SyncRequest(method: .get, path: "/deltas/from:0", accept: "application/json"))
        return try DeltaPack(JSONCodec().decode(answer.body), requireID: false).models["Note"]?.first?.fields["text"]
    }

    @Test("by default a device's newer edit replaces the pulled version and reaches the server")
    func defaultKeepsNewerLocalEdit() async throws {
        let harness = AquasyncHarness()
        let edits = try await Self.concurrentEdits(harness)
        let report = try await edits.second.sync()
        #expect(report.pulled == 0 && report.pushed == 1)
        #expect(try await serverText(harness) == "second")
        try await edits.first.sync()
        #expect(try await edits.first.object("Note", gid: edits.gid)?.fields["text"] == "second")
    }

    @Test("a device whose policy is serverWins takes the pulled version over its newer edit and pushes nothing")
    func clientPolicyServerWins() async throws {
        let harness = AquasyncHarness()
        let edits = try await Self.concurrentEdits(harness, secondPolicy: .serverWins)
        let report = try await edits.second.sync()
        #expect(report.pulled == 1 && report.pushed == 0)
        let object = try #require(try await edits.second.object("Note", gid: edits.gid))
        #expect(object.fields["text"] == "first")
        #expect(!object.isDirty)
        #expect(try await serverText(harness) == "first")
    }

    @Test("a server whose policy is serverWins keeps its version over another device's newer one, and that device takes it back")
    func serverPolicyServerWins() async throws {
        var harness = AquasyncHarness()
        harness.conflictPolicy = .serverWins
        let (first, second, gid, clock) = try await Self.sharedNote(harness)
        try await second.save("Note", gid: gid, fields: ["text": "second's newer edit"])
        // The server wrote its version again, so the device that lost pulls it, in the same sync (the
        // push's answer does not let it move past its pack), and is clean.
        let report = try await second.sync()
        #expect(report.pushed == 1 && report.pulled == 1)
        #expect(try await serverText(harness) == "base")
        #expect(try await second.sync().pulled == 0)
        let lost = try #require(try await second.object("Note", gid: gid))
        #expect(lost.fields["text"] == "base")
        #expect(!lost.isDirty)

        // The device that made the stored version still edits it: its own versions are not a conflict.
        clock.wallTime = .milliseconds(1_700_000_020_000)
        try await first.save("Note", gid: gid, fields: ["text": "first's own edit"])
        try await first.sync()
        #expect(try await serverText(harness) == "first's own edit")
        try await second.sync()
        #expect(try await second.object("Note", gid: gid)?.fields["text"] == "first's own edit")
    }

    /// Joins both versions' texts, server's first, so both sides of a sync make the same record.
    static let joining = DeferredPolicy { conflict in
        var merged = conflict.local
        let server = conflict.serverVersion.fields["text"]?.stringValue ?? ""
        let client = conflict.clientVersion.fields["text"]?.stringValue ?? ""
        merged.fields["text"] = .string(server + " + " + client)
        return .merged(merged)
    }

    @Test("a device's merge becomes a local edit, stamped after both versions, that every device ends with")
    func clientMerge() async throws {
        let harness = AquasyncHarness()
        let edits = try await Self.concurrentEdits(harness, secondPolicy: Self.joining)
        let report = try await edits.second.sync()
        #expect(report.pulled == 1 && report.pushed == 1)
        let merged = try #require(try await edits.second.object("Note", gid: edits.gid))
        #expect(merged.fields == ["text": "first + second"])
        #expect(merged.localTimestamp == 1_700_000_020_001)
        #expect(!merged.isDirty)
        try await edits.first.sync()
        #expect(try await edits.first.object("Note", gid: edits.gid)?.fields == ["text": "first + second"])
    }

    @Test("a server's merge is stored as the server's own version, which both devices pull")
    func serverMerge() async throws {
        var harness = AquasyncHarness()
        harness.conflictPolicy = Self.joining
        let (first, second, gid, _) = try await Self.sharedNote(harness)
        try await second.save("Note", gid: gid, fields: ["text": "edit"])
        // The device that pushed pulls the merge in the same sync: the push's answer does not let it move
        // past its pack, since the server wrote a version of its own.
        #expect(try await second.sync().pulled == 1)
        #expect(try await serverText(harness) == "base + edit")
        #expect(try await first.sync().pulled == 1)
        for device in [first, second] {
            let object = try #require(try await device.object("Note", gid: gid))
            #expect(object.fields == ["text": "base + edit"])
            #expect(object.deviceToken == AquasyncServer.serverDeviceToken)
            #expect(object.localTimestamp == 1_700_000_010_001)
        }
    }

    @Test("keepBoth on a device: the pulled version under its gid, the local edit as a new record")
    func clientKeepsBoth() async throws {
        let harness = AquasyncHarness()
        let edits = try await Self.concurrentEdits(harness, secondPolicy: DeferredPolicy { _ in .keepBoth })
        let report = try await edits.second.sync()
        #expect(report.pulled == 1 && report.pushed == 1)
        let notes = try await edits.second.objects("Note")
        #expect(Set(notes.map { $0.fields["text"] }) == ["first", "second"])
        #expect(try await edits.second.object("Note", gid: edits.gid)?.fields["text"] == "first")
        try await edits.first.sync()
        #expect(try await edits.first.objects("Note").count == 2)
    }

    @Test("keepBoth on the server: the pushed version under its gid, the stored one as a copy every device pulls")
    func serverKeepsBoth() async throws {
        var harness = AquasyncHarness()
        harness.conflictPolicy = DeferredPolicy { _ in .keepBoth }
        let (first, second, gid, _) = try await Self.sharedNote(harness)
        try await second.save("Note", gid: gid, fields: ["text": "edit"])
        try await second.sync()
        for device in [first, second] {
            try await device.sync()
            let notes = try await device.objects("Note")
            #expect(notes.count == 2)
            #expect(try await device.object("Note", gid: gid)?.fields["text"] == "edit")
            let copy = try #require(notes.first { $0.gid != gid })
            #expect(copy.fields["text"] == "base")
            #expect(copy.deviceToken == AquasyncServer.serverDeviceToken)
        }
    }
}
