import Aquasync
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

@Suite("Aquasync: devices converge through the server, in every codec")
struct AquasyncSyncTests {
    @Test("create, update and soft delete on one device reach another", arguments: TestCodec.allCases)
    func createUpdateDeleteTravel(codec: TestCodec) async throws {
        let harness = AquasyncHarness()
        let clock = TestClock()
        let phone = harness.client(codec, clock: clock)
        let laptop = harness.client(codec)

        let gid = try await phone.save("Contact", fields: ["name": "Ada", "age": 36])
        try await phone.sync()
        try await laptop.sync()
        #expect(try await laptop.object("Contact", gid: gid)?.fields == ["name": "Ada", "age": 36])

        clock.wallTime = .milliseconds(1_700_000_001_000)
        try await phone.save("Contact", gid: gid, fields: ["name": "Ada Lovelace", "age": 36])
        try await phone.sync()
        try await laptop.sync()
        #expect(try await laptop.object("Contact", gid: gid)?.fields["name"] == "Ada Lovelace")

        try await phone.delete("Contact", gid: gid)
        try await phone.sync()
        try await laptop.sync()
        let deleted = try #require(try await laptop.object("Contact", gid: gid))
        #expect(deleted.isDeleted)
        #expect(try await laptop.objects("Contact").isEmpty)
    }

    @Test("the newer localTimestamp wins a conflict, whichever device syncs first", arguments: [true, false])
    func newerTimestampWins(newerSyncsFirst: Bool) async throws {
        let harness = AquasyncHarness()
        let olderClock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
        let newerClock = TestClock(wallTime: .milliseconds(1_700_000_005_000))
        let older = harness.client(.json, clock: olderClock)
        let newer = harness.client(.json, clock: newerClock)
        let gid = try await older.save("Note", fields: ["text": "first"])
        try await older.sync()
        try await newer.sync()

        olderClock.wallTime = .milliseconds(1_700_000_010_000)
        newerClock.wallTime = .milliseconds(1_700_000_020_000)
        try await older.save("Note", gid: gid, fields: ["text": "older edit"])
        try await newer.save("Note", gid: gid, fields: ["text": "newer edit"])
        let order = newerSyncsFirst ? [newer, older] : [older, newer]
        for _ in 0..<2 { for device in order { try await device.sync() } }

        #expect(try await older.object("Note", gid: gid)?.fields["text"] == "newer edit")
        #expect(try await newer.object("Note", gid: gid)?.fields["text"] == "newer edit")
        #expect(try await older.object("Note", gid: gid)?.isDirty == false)
    }

    @Test("a tie on localTimestamp goes to the greater deviceToken on every device")
    func tieBreaksByDeviceToken() async throws {
        let harness = AquasyncHarness()
        let clock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
        let first = harness.client(.json, clock: clock)
        let second = harness.client(.json, clock: clock)
        let gid = try await first.save("Note", fields: ["text": "base"])
        try await first.sync()
        try await second.sync()

        clock.wallTime = .milliseconds(1_700_000_030_000)
        try await first.save("Note", gid: gid, fields: ["text": "from first"])
        try await second.save("Note", gid: gid, fields: ["text": "from second"])
        for _ in 0..<2 {
            try await first.sync()
            try await second.sync()
        }
        let firstToken = try await first.deviceToken()
        let secondToken = try await second.deviceToken()
        let expected: SyncValue = firstToken > secondToken ? "from first" : "from second"
        #expect(try await first.object("Note", gid: gid)?.fields["text"] == expected)
        #expect(try await second.object("Note", gid: gid)?.fields["text"] == expected)
        let server = try await harness.send(SyncRequest(method: .get, path: "/deltas/from:0", accept: "application/json"))
        let pack = try DeltaPack(JSONCodec().decode(server.body), requireID: false)
        #expect(pack.models["Note"]?.first?.fields["text"] == expected)
    }

    @Test("a pull leaves out the device's own changes and never touches isDirty or localTimestamp")
    func pullLeavesOutOwnChanges() async throws {
        let harness = AquasyncHarness()
        let device = harness.client(.json)
        let other = harness.client(.json)
        let gid = try await device.save("Contact", fields: ["name": "Grace"])
        #expect(try await device.pushSync() == 1)
        #expect(try await device.pullSync() == 0)

        let otherGid = try await other.save("Contact", fields: ["name": "Linus"])
        try await other.sync()
        let localEdit = try await device.save("Contact", fields: ["name": "local, not pushed"])
        let before = try #require(try await device.object("Contact", gid: localEdit))
        #expect(try await device.pullSync() == 1)
        let pulled = try #require(try await device.object("Contact", gid: otherGid))
        #expect(pulled.isDirty == false)
        #expect(pulled.localTimestamp == (try await other.object("Contact", gid: otherGid))?.localTimestamp)
        #expect(try await device.object("Contact", gid: localEdit) == before)
        #expect(try await device.object("Contact", gid: gid)?.isDirty == false)
    }

    @Test("204 when nothing is new; the UST only grows")
    func noContentWhenNothingIsNew() async throws {
        let harness = AquasyncHarness()
        let empty = try await harness.send(SyncRequest(method: .get, path: "/deltas/from:0"))
        #expect(empty.status == 204)
        #expect(empty.body.isEmpty)

        let device = harness.client(.json)
        try await device.save("Contact", fields: ["name": "Ada"])
        try await device.save("Contact", fields: ["name": "Alan"])
        try await device.sync()
        let all = try await harness.send(SyncRequest(method: .get, path: "/deltas/from:0"))
        let pack = try DeltaPack(JSONCodec().decode(all.body), requireID: false)
        let usts = try #require(pack.models["Contact"]).compactMap(\.ust)
        #expect(usts.count == 2)
        #expect(usts == usts.sorted() && Set(usts).count == 2)
        let latest = try #require(pack.latestUST)
        #expect(try await harness.send(SyncRequest(method: .get, path: "/deltas/from:\(latest)")).status == 204)
    }

    @Test("a pack sent twice is applied once")
    func repeatedPackAppliedOnce() async throws {
        let harness = AquasyncHarness()
        let gid = "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b"
        let token = "0f8fad5b-d9cb-469f-a165-70867728950e"
        let pack: SyncValue = [
            "_id": "9b2e7c4a-1d3f-4a5b-8c6d-7e8f9a0b1c2d",
            "Contact": [["gid": .string(gid), "deviceToken": .string(token), "localTimestamp": 5, "name": "Ada"]],
        ]
        #expect(try await harness.send(.pushJSON(pack)).status == 200)
        let positionAfterFirst = try await harness.serverStore.latestPosition(for: harness.account)
        let again = try await harness.send(.pushJSON(pack))
        #expect(again.status == 200)
        #expect(try JSONCodec().decode(again.body) == ["id": "success"])
        #expect(try await harness.serverStore.latestPosition(for: harness.account) == positionAfterFirst)
    }

    @Test("a record edited while its push is in flight stays dirty and goes out next time")
    func editDuringPushStaysDirty() async throws {
        let harness = AquasyncHarness()
        let box = ClientBox()
        let edits = Counter()
        let transport = harness.transport.with(HookMiddleware { request in
            if request.method == .post, edits.increment() == 1, let client = box.client, let gid = box.gid {
                try await client.save("Contact", gid: gid, fields: ["name": "edited during push"])
            }
            return nil
        })
        let device = harness.client(.json, through: transport)
        box.client = device
        box.gid = try await device.save("Contact", fields: ["name": "before push"])
        let gid = try #require(box.gid)

        #expect(try await device.pushSync() == 1)
        let afterFirst = try #require(try await device.object("Contact", gid: gid))
        #expect(afterFirst.isDirty)
        #expect(afterFirst.fields["name"] == "edited during push")

        #expect(try await device.pushSync() == 1)
        #expect(try await device.object("Contact", gid: gid)?.isDirty == false)
        let reader = harness.client(.json)
        try await reader.sync()
        #expect(try await reader.object("Contact", gid: gid)?.fields["name"] == "edited during push")
    }

    @Test("a 500 from the server is retried, and the retry succeeds")
    func serverErrorIsRetried() async throws {
        let harness = AquasyncHarness()
        let failures = Counter()
        let transport = harness.transport.with(HookMiddleware { request in
            guard request.method == .post, failures.count < 2 else { return nil }
            failures.increment()
            return SyncResponse.text("try again", status: 500)
        })
        let device = harness.client(
            .json, through: transport, retry: RetryPolicy(maxAttempts: 3, initialDelay: .zero))
        let gid = try await device.save("Contact", fields: ["name": "Ada"])
        #expect(try await device.pushSync() == 1)
        #expect(failures.count == 2)
        #expect(try await device.object("Contact", gid: gid)?.isDirty == false)
    }

    @Test("without retries left, a server error surfaces and the record stays dirty")
    func serverErrorSurfaces() async throws {
        let harness = AquasyncHarness()
        let transport = harness.transport.with(HookMiddleware { request in
            request.method == .post ? SyncResponse.text("down", status: 503) : nil
        })
        let device = harness.client(.json, through: transport, retry: RetryPolicy(maxAttempts: 2, initialDelay: .zero))
        let gid = try await device.save("Contact", fields: ["name": "Ada"])
        await #expect(throws: AquasyncClientError.self) { try await device.pushSync() }
        #expect(try await device.object("Contact", gid: gid)?.isDirty == true)
    }
}

/// Lets a middleware reach the client it sits under.
final class ClientBox: @unchecked Sendable {
    var client: AquasyncClient?
    var gid: String?
}
