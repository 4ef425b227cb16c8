import AppSync
import FoundationEssentials
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// The device's pending changes.
func pendingChanges(of client: AppSyncClient) async throws -> [JournalEntry] {
    try await client.store.transaction(for: client.account) { tx in try await tx.journal.entries() }
}

/// Expects the server and every client to hold the same live objects of `type`
/// (fields, flags and timestamps) and no client to have anything left to send.
/// - Returns: the server's live objects.
@discardableResult
func expectConverged(_ harness: AppSyncHarness, _ clients: [AppSyncClient], type: String = "note") async throws
    -> Set<AppSyncObject>
{
    let server = Set(try await harness.serverObjects(type).values)
    for client in clients {
        #expect(Set(try await client.objects(type)) == server)
        #expect(try await pendingChanges(of: client).isEmpty)
    }
    return server
}

/// Two devices on notes: both hold one note from the server, with title `base`.
struct TwoDevices {
    let a: AppSyncClient
    let b: AppSyncClient
    let guid: String

    init(
        _ harness: AppSyncHarness, _ transport: any SyncClientTransport, policy: any ConflictPolicy = .askUser,
        skews: (a: Double, b: Double) = (0, 0), storeOfB: any SyncStore = MemoryStore()
    ) async throws {
        a = harness.client(transport, conflictPolicy: policy, skew: skews.a, types: [AppSyncHarness.note])
        b = harness.client(transport, conflictPolicy: policy, store: storeOfB, skew: skews.b, types: [AppSyncHarness.note])
        guid = try await a.save("note", fields: ["title": "base"])
        try await a.sync()
        try await b.sync()
        harness.clock.advance()
    }

    /// A changes the note to `fromA` and syncs; then B changes it to `fromB` without syncing first.
    func editBoth(_ harness: AppSyncHarness, fromA: SyncValue = "from A", fromB: SyncValue = "from B") async throws {
        try await a.save("note", guid: guid, fields: ["title": fromA])
        try await a.sync()
        harness.clock.advance()
        try await b.save("note", guid: guid, fields: ["title": fromB])
    }
}

@Suite("appSync on the journal: ask the user, skewed clocks")
struct AppSyncJournalConflictTests {
    enum Answer: String, CaseIterable, CustomStringConvertible {
        case mine, theirs, both
        var description: String { rawValue }
        var answer: ConflictAnswer {
            switch self {
            case .mine: .keepMine
            case .theirs: .takeTheirs
            case .both: .keepBoth
            }
        }
        /// The titles every device holds once the answer went round.
        var titles: [SyncValue] {
            switch self {
            case .mine: ["from B"]
            case .theirs: ["from A"]
            case .both: ["from A", "from B"]
            }
        }
    }

    @Test("ask the user: B reports base, local and remote; after each answer every device holds the same notes", arguments: Answer.allCases, TransportRoute.allCases)
    func askTheUser(answer: Answer, route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let devices = try await TwoDevices(harness, transport)
            let editedOnA = harness.clock.now()
            try await devices.editBoth(harness)
            let report = try await devices.b.sync()
            #expect(report.conflicts == 1)
            #expect(report.openConflicts == 1)
            #expect(report.uploaded == 0)
            #expect(try await harness.serverObjects("note")[devices.guid]?.fields["title"] == "from A")

            let conflict = try #require(try await devices.b.store.openConflicts(for: devices.b.account).first)
            #expect(conflict.id == "appsync/note/\(devices.guid)")
            #expect(conflict.base?.fields == ["title": "base"])
            #expect(conflict.local.fields == ["title": "from B"])
            #expect(conflict.remote.fields == ["title": "from A"])
            #expect(conflict.localAction == .modify)
            #expect(conflict.localTime == harness.clock.now())
            #expect(conflict.remoteTime == editedOnA)
            #expect(try await devices.b.sync().openConflicts == 1, "an unanswered conflict is not sent")

            try await devices.b.store.answerConflict(conflict.id, with: answer.answer, for: devices.b.account)
            harness.clock.advance()
            #expect(try await devices.b.sync().openConflicts == 0)
            #expect(try await devices.a.sync().conflicts == 0)
            let notes = try await expectConverged(harness, [devices.a, devices.b])
            #expect(notes.map { $0.fields["title"] }.sorted { "\($0!)" < "\($1!)" } == answer.titles)
        }
    }

    @Test("keep both of two bookings holding one primary key cannot be done: the conflict stays open for another answer", arguments: TransportRoute.allCases)
    func keepBothWithOnePrimaryKey(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let a = harness.client(transport, conflictPolicy: .askUser)
            let b = harness.client(transport, conflictPolicy: .askUser)
            let guid = try await a.save("booking", fields: ["pk": "2014-05-10", "guest": "Ada"])
            try await a.sync()
            try await b.sync()
            try await a.save("booking", guid: guid, fields: ["pk": "2014-05-10", "guest": "Grace"])
            try await a.sync()
            try await b.save("booking", guid: guid, fields: ["pk": "2014-05-10", "guest": "Alan"])
            #expect(try await b.sync().openConflicts == 1)
            let id = "appsync/booking/\(guid)"
            try await b.store.answerConflict(id, with: .keepBoth, for: b.account)
            #expect(try await b.sync().openConflicts == 1)
            let conflict = try #require(try await b.store.openConflicts(for: b.account).first)
            #expect(conflict.answer == nil)
            #expect(conflict.local.fields["guest"] == "Alan")

            try await b.store.answerConflict(id, with: .keepMine, for: b.account)
            try await b.sync()
            try await a.sync()
            let bookings = try await expectConverged(harness, [a, b], type: "booking")
            #expect(bookings.map { $0.fields["guest"] } == ["Alan"])
        }
    }

    enum Skew: String, CaseIterable, CustomStringConvertible {
        case aAheadBBehind, aBehindBAhead
        var description: String { rawValue }
        var seconds: (a: Double, b: Double) {
            switch self {
            case .aAheadBBehind: (5 * 3_600, -5 * 3_600)
            case .aBehindBAhead: (-5 * 3_600, 5 * 3_600)
            }
        }
    }

    @Test("skewed clocks: the same note edited on both devices is a conflict whatever the skew; keeping mine wins everywhere", arguments: Skew.allCases, TransportRoute.allCases)
    func skewedEditsConflict(skew: Skew, route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let devices = try await TwoDevices(harness, transport, skews: skew.seconds)
            try await devices.editBoth(harness)
            let report = try await devices.b.sync()
            #expect(report.conflicts == 1)
            #expect(report.openConflicts == 1)
            let editedOnA = try #require(try await harness.serverObjects("note")[devices.guid]).timestampLastUpdate

            try await devices.b.store.answerConflict("appsync/note/\(devices.guid)", with: .keepMine, for: devices.b.account)
            try await devices.b.sync()
            try await devices.a.sync()
            let notes = try await expectConverged(harness, [devices.a, devices.b])
            #expect(notes.map { $0.fields["title"] } == ["from B"])
            #expect(notes.first.map { $0.timestampLastUpdate > editedOnA } == true, "mine is stamped after the version it overrides")
        }
    }

    @Test("skewed clocks: an edit made after syncing the other device's edit is no conflict, and it wins everywhere", arguments: Skew.allCases, TransportRoute.allCases)
    func skewedSequentialEditsDoNotConflict(skew: Skew, route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let devices = try await TwoDevices(harness, transport, policy: NewestWinsPolicy(), skews: skew.seconds)
            try await devices.a.save("note", guid: devices.guid, fields: ["title": "from A"])
            try await devices.a.sync()
            #expect(try await devices.b.sync().conflicts == 0)
            try await devices.b.save("note", guid: devices.guid, fields: ["title": "from B"])
            let report = try await devices.b.sync()
            #expect(report.conflicts == 0)
            #expect(report.uploaded == 1)
            #expect(try await devices.a.sync().conflicts == 0)
            let notes = try await expectConverged(harness, [devices.a, devices.b])
            #expect(notes.map { $0.fields["title"] } == ["from B"])
        }
    }

    @Test("skewed clocks: the same value written on both devices is no conflict, and nothing is left to send", arguments: Skew.allCases, TransportRoute.allCases)
    func skewedSameValueDoesNotConflict(skew: Skew, route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let devices = try await TwoDevices(harness, transport, skews: skew.seconds)
            try await devices.editBoth(harness, fromA: "same", fromB: "same")
            let report = try await devices.b.sync()
            #expect(report.conflicts == 0)
            #expect(report.uploaded == 0)
            try await devices.a.sync()
            let notes = try await expectConverged(harness, [devices.a, devices.b])
            #expect(notes.map { $0.fields["title"] } == ["same"])
        }
    }
}

@Suite("appSync on the journal: a change refused for good")
struct AppSyncJournalFailureTests {
    static let refusesForbidden = RecordValidation { record in
        record.fields["title"] == "forbidden" ? "a note may not be called forbidden" : nil
    }

    @Test("a 422 for one of three edits: that change leaves the journal and is reported, the other two reach the server, nothing is sent again", arguments: TransportRoute.allCases)
    func oneEditRefused(route: TransportRoute) async throws {
        var harness = AppSyncHarness()
        harness.validation = Self.refusesForbidden
        try await harness.withTransport(route) { transport in
            let log = RequestLog()
            let device = harness.noteDevice(transport.with(log))
            var guids: [String] = []
            for title in ["one", "two", "three"] { guids.append(try await device.save("note", fields: ["title": .string(title)])) }
            try await device.sync()
            harness.clock.advance()
            for (guid, title) in zip(guids, ["one, edited", "forbidden", "three, edited"]) {
                try await device.save("note", guid: guid, fields: ["title": .string(title)])
            }
            let report = try await device.sync()
            #expect(report.uploaded == 2)
            #expect(report.refused == [RecordKey(collection: "appsync/note", id: RecordID(guids[1])): "a note may not be called forbidden"])
            #expect(report.rejected.isEmpty)
            #expect(try await pendingChanges(of: device).isEmpty)
            let server = try await harness.serverObjects("note")
            #expect(guids.map { server[$0]?.fields["title"] } == ["one, edited", "two", "three, edited"])

            log.clear()
            #expect(try await device.sync() == AppSyncClient.Report())
            #expect(log.requests.allSatisfy { $0.hasPrefix("GET ") })
        }
    }

    @Test("the update answer tells a refusal (status 422) from a primary-key conflict (status 409)", arguments: TransportRoute.allCases)
    func refusalAndConflictOnTheWire(route: TransportRoute) async throws {
        var harness = AppSyncHarness()
        harness.validation = Self.refusesForbidden
        try await harness.serverSave(guid: "HELD", fields: ["pk": "2014-05-10", "title": "held"])
        try await harness.withTransport(route) { transport in
            let body = #"""
                {"objects": [
                  {"guid": "CLASH", "timestamp_created": 1700000000, "timestamp_lastupdate": 1700000000, "pk": "2014-05-10", "title": "mine"},
                  {"guid": "BAD", "timestamp_created": 1700000000, "timestamp_lastupdate": 1700000000, "pk": "2014-05-11", "title": "forbidden"},
                  {"guid": "GOOD", "timestamp_created": 1700000000, "timestamp_lastupdate": 1700000000, "pk": "2014-05-12", "title": "fine"}
                ]}
                """#
            let response = try await transport.send(
                SyncRequest(method: .post, path: "/rest/booking/update", contentType: "application/json", body: Array(body.utf8)))
            let result = try JSONCodec().decode(response.body)["result"]
            #expect(result?["statuscode"] == "NOK")
            let rejected = result?["rejected"]?.arrayValue ?? []
            #expect(rejected.map { $0["guid"] } == ["CLASH", "BAD"])
            #expect(rejected.map { $0["status"] } == [409, 422])
            #expect(rejected.last?["reason"] == "a note may not be called forbidden")
            #expect(Set(try await harness.serverObjects().keys) == ["HELD", "GOOD"])
        }
    }
}

@Suite("appSync on the journal: a change in flight, a store of an earlier version, a full sync")
struct AppSyncJournalAdoptionTests {
    @Test("a change made while the upload is in flight stays in the journal, based on what the server took, and goes up next", arguments: TransportRoute.allCases)
    func changeDuringUpload(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        let store = MemoryStore()
        try await harness.withTransport(route) { transport in
            let writer = harness.noteDevice(transport, store: store)
            let guid = try await writer.save("note", fields: ["title": "first"])
            let hook = BeforeUpload { try await writer.save("note", guid: guid, fields: ["title": "second"]) }
            hook.armed = true
            let device = harness.noteDevice(transport.with(hook), store: store)
            #expect(try await device.sync().uploaded == 1)
            #expect(try await harness.serverObjects("note")[guid]?.fields["title"] == "first")
            let pending = try await pendingChanges(of: device)
            #expect(pending.map { $0.local.fields["title"] } == ["second"])
            #expect(pending.first?.archCopy?.record.fields["title"] == "first")

            let next = try await device.sync()
            #expect(next.uploaded == 1)
            #expect(next.conflicts == 0)
            let notes = try await expectConverged(harness, [device])
            #expect(notes.map { $0.fields["title"] } == ["second"])
        }
    }

    @Test("an earlier version's store: objects its counters marked dirty are journaled and uploaded once, clean ones are not", arguments: TransportRoute.allCases)
    func counterMarkedChangesAreUploaded(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        let store = MemoryStore()
        let written = Date(timeIntervalSince1970: 1_700_000_000)
        try await store.transaction(for: "device") { tx in
            for (guid, counter) in [("DIRTY", 2), ("CLEAN", 0)] {
                try await tx.put(
                    SyncRecord(
                        collection: "appsync/note", id: RecordID(guid),
                        fields: [
                            "guid": .string(guid), "isdeleted": 0, "timestamp_created": .date(written),
                            "timestamp_lastupdate": .date(written), "title": .string(guid), "counter_lastupdate": .integer(Int64(counter)),
                        ], version: RecordVersion(modifiedAt: written, node: "appsync")))
            }
            try await tx.setMetadata(2, MetadataKey<Int64>("counter", peer: "appsync.client"))
            try await tx.setMetadata(1, MetadataKey<Int64>("counter_lastsync/note", peer: "appsync.client"))
        }
        try await harness.withTransport(route) { transport in
            let device = harness.noteDevice(transport, store: store)
            let report = try await device.sync()
            #expect(report.uploaded == 1)
            #expect(Array(try await harness.serverObjects("note").keys) == ["DIRTY"])
            #expect(try await pendingChanges(of: device).isEmpty)
            #expect(try await device.sync().uploaded == 0)
        }
    }

    @Test("a full sync to a server that lost the objects sends them again, and only them", arguments: TransportRoute.allCases)
    func fullSyncRestoresALostServer(route: TransportRoute) async throws {
        let device = MemoryStore()
        let before = AppSyncHarness()
        try await before.withTransport(route) { transport in
            let client = before.noteDevice(transport, store: device)
            for title in ["one", "two"] { try await client.save("note", fields: ["title": .string(title)]) }
            try await client.sync()
        }
        let lost = AppSyncHarness()
        try await lost.serverSave(guid: "NEW", fields: ["title": "made since"], type: "note")
        try await lost.withTransport(route) { transport in
            let client = lost.noteDevice(transport, store: device)
            let report = try await client.fullSync()
            #expect(report.downloaded == 1)
            #expect(report.uploaded == 2)
            let notes = try await expectConverged(lost, [client])
            #expect(Set(notes.map { $0.fields["title"] }) == ["one", "two", "made since"])
            #expect(try await client.fullSync().uploaded == 0)
        }
    }
}
