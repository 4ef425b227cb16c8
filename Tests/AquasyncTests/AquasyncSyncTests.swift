import Aquasync
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

@Suite("Aquasync: devices converge through the server, in every codec, in process and over HTTP")
struct AquasyncSyncTests {
    @Test("create, update and soft delete on one device reach another", arguments: TestCodec.allCases, TransportRoute.allCases)
    func createUpdateDeleteTravel(codec: TestCodec, route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let clock = TestClock()
            let phone = harness.client(codec, clock: clock, through: transport)
            let laptop = harness.client(codec, through: transport)

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
    }

    @Test("create, update, soft delete and a conflict travel between devices", arguments: TestCodec.allCases, TransportRoute.allCases)
    func devicesConverge(codec: TestCodec, route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let phoneClock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
            let laptopClock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
            let phone = harness.client(codec, clock: phoneClock, through: transport)
            let laptop = harness.client(codec, clock: laptopClock, through: transport)

            let ada = try await phone.save("Contact", fields: ["name": "Ada", "photo": .data([0, 1, 2, 255])])
            let alan = try await laptop.save("Contact", fields: ["name": "Alan", "score": 1.5])
            try await phone.sync()
            try await laptop.sync()
            try await phone.sync()
            #expect(try await phone.objects("Contact").count == 2)
            // JSON carries data as base64 text; the other codecs as data.
            let photo: SyncValue = codec == .json ? "AAEC/w==" : .data([0, 1, 2, 255])
            #expect(try await laptop.object("Contact", gid: ada)?.fields["photo"] == photo)

            phoneClock.wallTime = .milliseconds(1_700_000_010_000)
            laptopClock.wallTime = .milliseconds(1_700_000_020_000)
            try await phone.save("Contact", gid: ada, fields: ["name": "Ada (phone)"])
            try await laptop.save("Contact", gid: ada, fields: ["name": "Ada (laptop)"])
            try await laptop.delete("Contact", gid: alan)
            try await phone.sync()
            try await laptop.sync()
            try await phone.sync()
            for device in [phone, laptop] {
                #expect(try await device.object("Contact", gid: ada)?.fields["name"] == "Ada (laptop)")
                #expect(try await device.object("Contact", gid: alan)?.isDeleted == true)
            }
        }
    }

    @Test("the newer localTimestamp wins a conflict, whichever device syncs first", arguments: [true, false], TransportRoute.allCases)
    func newerTimestampWins(newerSyncsFirst: Bool, route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let olderClock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
            let newerClock = TestClock(wallTime: .milliseconds(1_700_000_005_000))
            let older = harness.client(.json, clock: olderClock, through: transport)
            let newer = harness.client(.json, clock: newerClock, through: transport)
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
    }

    @Test("a tie on localTimestamp goes to the greater deviceToken on every device", arguments: TransportRoute.allCases)
    func tieBreaksByDeviceToken(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let clock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
            let first = harness.client(.json, clock: clock, through: transport)
            let second = harness.client(.json, clock: clock, through: transport)
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
            let server = try await transport.send(SyncRequest(method: .get, path: "/deltas/from:0", accept: "application/json"))
            let pack = try DeltaPack(JSONCodec().decode(server.body), requireID: false)
            #expect(pack.models["Note"]?.first?.fields["text"] == expected)
        }
    }

    @Test("a pull leaves out the device's own changes and never touches isDirty or localTimestamp", arguments: TransportRoute.allCases)
    func pullLeavesOutOwnChanges(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let device = harness.client(.json, through: transport)
            let other = harness.client(.json, through: transport)
            let gid = try await device.save("Contact", fields: ["name": "Grace"])
            #expect(try await device.pushSync().pushed == 1)
            #expect(try await device.pullSync().pulled == 0)

            let otherGid = try await other.save("Contact", fields: ["name": "Linus"])
            try await other.sync()
            let localEdit = try await device.save("Contact", fields: ["name": "local, not pushed"])
            let before = try #require(try await device.object("Contact", gid: localEdit))
            #expect(try await device.pullSync().pulled == 1)
            let pulled = try #require(try await device.object("Contact", gid: otherGid))
            #expect(pulled.isDirty == false)
            #expect(pulled.localTimestamp == (try await other.object("Contact", gid: otherGid))?.localTimestamp)
            #expect(try await device.object("Contact", gid: localEdit) == before)
            #expect(try await device.object("Contact", gid: gid)?.isDirty == false)
        }
    }

    @Test("204 when nothing is new; the UST only grows", arguments: TransportRoute.allCases)
    func noContentWhenNothingIsNew(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let empty = try await transport.send(SyncRequest(method: .get, path: "/deltas/from:0"))
            #expect(empty.status == 204)
            #expect(empty.body.isEmpty)

            let device = harness.client(.json, through: transport)
            try await device.save("Contact", fields: ["name": "Ada"])
            try await device.save("Contact", fields: ["name": "Alan"])
            try await device.sync()
            let all = try await transport.send(SyncRequest(method: .get, path: "/deltas/from:0"))
            let pack = try DeltaPack(JSONCodec().decode(all.body), requireID: false)
            let usts = try #require(pack.models["Contact"]).compactMap(\.ust)
            #expect(usts.count == 2)
            #expect(usts == usts.sorted() && Set(usts).count == 2)
            let latest = try #require(pack.latestUST)
            #expect(try await transport.send(SyncRequest(method: .get, path: "/deltas/from:\(latest)")).status == 204)
        }
    }

    @Test(
        "a push moves latestUST past the device's own writes when nothing came between, and not when another device wrote",
        arguments: TransportRoute.allCases)
    func latestUSTMovesPastOwnPush(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let phone = harness.client(.json, through: transport)
            let laptop = harness.client(.json, through: transport)
            for name in ["Ada", "Alan", "Grace"] { try await phone.save("Contact", fields: ["name": .string(name)]) }
            try await phone.sync()
            #expect(try await phone.latestUST() == 3, "the phone's three records are the server's newest")

            // The laptop pulls the three, then pushes its own right after them.
            let linus = try await laptop.save("Contact", fields: ["name": "Linus"])
            try await laptop.sync()
            #expect(try await laptop.latestUST() == 4)

            // The laptop's write came between the phone's pull and its next push: the phone stays, and its next
            // pull brings the laptop's record.
            try await phone.save("Contact", fields: ["name": "Barbara"])
            try await phone.pushSync()
            #expect(try await phone.latestUST() == 3)
            let pulled = try await phone.pullSync()
            #expect(pulled.pulled == 1)
            #expect(try await phone.object("Contact", gid: linus)?.fields["name"] == "Linus")
            #expect(try await phone.latestUST() == 5)
        }
    }

    @Test("a pack sent twice is applied once", arguments: TransportRoute.allCases)
    func repeatedPackAppliedOnce(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let gid = "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b"
            let token = "0f8fad5b-d9cb-469f-a165-70867728950e"
            let pack: SyncValue = [
                "_id": "9b2e7c4a-1d3f-4a5b-8c6d-7e8f9a0b1c2d",
                "Contact": [["gid": .string(gid), "deviceToken": .string(token), "localTimestamp": 5, "name": "Ada"]],
            ]
            #expect(try await transport.send(.pushJSON(pack)).status == 200)
            let positionAfterFirst = try await harness.serverStore.latestPosition(for: harness.account)
            let again = try await transport.send(.pushJSON(pack))
            #expect(again.status == 200)
            #expect(try JSONCodec().decode(again.body) == ["id": "success"])
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == positionAfterFirst)
        }
    }

    @Test(
        "a device's older pack sent again after a newer one changes nothing, and the server keeps one entry for the device",
        arguments: TransportRoute.allCases)
    func olderPackSentAgain(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let gid = "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b"
            let token = "0f8fad5b-d9cb-469f-a165-70867728950e"
            let packIDs = ["9b2e7c4a-1d3f-4a5b-8c6d-7e8f9a0b1c2d", "9b2e7c4a-1d3f-4a5b-8c6d-7e8f9a0b1c2e"]
            let packs: [SyncValue] = zip(packIDs, [(5, "Ada"), (6, "Ada Lovelace")]).map { id, version in
                [
                    "_id": .string(id),
                    "Contact": [
                        ["gid": .string(gid), "deviceToken": .string(token), "localTimestamp": .integer(Int64(version.0)),
                         "name": .string(version.1)]
                    ],
                ]
            }
            for pack in packs { #expect(try await transport.send(.pushJSON(pack)).status == 200) }
            let latest = try await harness.serverStore.latestPosition(for: harness.account)

            let again = try await transport.send(.pushJSON(packs[0]))
            #expect(again.status == 200)
            #expect(try JSONCodec().decode(again.body) == ["id": "success"])
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == latest)
            let (stored, remembered, perPack) = try await harness.serverStore.transaction(for: harness.account) { tx in
                (
                    try await tx.record(RecordKey(collection: "aquasync/Contact", id: RecordID(gid))),
                    try await tx.metadata(token, for: "aquasync.last-packs"),
                    try await tx.metadata("pack/" + packIDs[0], for: "aquasync.packs")
                )
            }
            #expect(stored?.record.fields["name"] == "Ada Lovelace")
            #expect(remembered == ["id": .string(packIDs[0])], "the device's last pack applied, written over by each one")
            #expect(perPack == nil, "no entry a pack")
        }
    }

    @Test("a record edited while its push is in flight stays dirty and goes out next time", arguments: TransportRoute.allCases)
    func editDuringPushStaysDirty(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let box = ClientBox()
            let edits = Counter()
            let hooked = transport.with(HookMiddleware { request in
                if request.method == .post, edits.increment() == 1, let client = box.client, let gid = box.gid {
                    try await client.save("Contact", gid: gid, fields: ["name": "edited during push"])
                }
                return nil
            })
            let device = harness.client(.json, through: hooked)
            box.client = device
            box.gid = try await device.save("Contact", fields: ["name": "before push"])
            let gid = try #require(box.gid)

            #expect(try await device.pushSync().pushed == 1)
            let afterFirst = try #require(try await device.object("Contact", gid: gid))
            #expect(afterFirst.isDirty)
            #expect(afterFirst.fields["name"] == "edited during push")

            #expect(try await device.pushSync().pushed == 1)
            #expect(try await device.object("Contact", gid: gid)?.isDirty == false)
            let reader = harness.client(.json, through: transport)
            try await reader.sync()
            #expect(try await reader.object("Contact", gid: gid)?.fields["name"] == "edited during push")
        }
    }

    @Test("a 500 from the server is retried, and the retry succeeds", arguments: TransportRoute.allCases)
    func serverErrorIsRetried(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let failures = Counter()
            let hooked = transport.with(HookMiddleware { request in
                guard request.method == .post, failures.count < 2 else { return nil }
                failures.increment()
                return SyncResponse.text("try again", status: 500)
            })
            let device = harness.client(
                .json, through: hooked, retry: RetryPolicy(maxAttempts: 3, initialDelay: .zero))
            let gid = try await device.save("Contact", fields: ["name": "Ada"])
            #expect(try await device.pushSync().pushed == 1)
            #expect(failures.count == 2)
            #expect(try await device.object("Contact", gid: gid)?.isDirty == false)
        }
    }

    @Test("without retries left, a server error surfaces and the record stays dirty", arguments: TransportRoute.allCases)
    func serverErrorSurfaces(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let hooked = transport.with(HookMiddleware { request in
                request.method == .post ? SyncResponse.text("down", status: 503) : nil
            })
            let device = harness.client(.json, through: hooked, retry: RetryPolicy(maxAttempts: 2, initialDelay: .zero))
            let gid = try await device.save("Contact", fields: ["name": "Ada"])
            await #expect(throws: AquasyncClientError.self) { try await device.pushSync() }
            #expect(try await device.object("Contact", gid: gid)?.isDirty == true)
        }
    }
}

/// Lets a middleware reach the client it sits under.
final class ClientBox: @unchecked Sendable {
    var client: AquasyncClient?
    var gid: String?
}
