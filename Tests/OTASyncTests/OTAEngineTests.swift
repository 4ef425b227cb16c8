import Foundation
import OTASync
import Synchronization
import SyncCore
import SyncTesting
import SyncXMLPlist
import Testing

/// How many tasks have finished.
final class FinishedCount: Sendable {
    private let finished = Mutex(0)

    var count: Int { finished.withLock { $0 } }

    func add() { finished.withLock { $0 += 1 } }
}

@Suite("OTA on the client engine: retries, one session at a time")
struct OTAEngineTests {
    let harness = OTAHarness()
    let clock = TestClock()
    let retry = RetryPolicy(maxAttempts: 5, initialDelay: .seconds(1), multiplier: 2, jitter: 0.5)

    /// A phone whose messages pass `front` on their way to the harness's server, retrying as `retry` says on `clock`.
    func phone(behind front: ScriptedFront, retry: RetryPolicy? = nil) -> Device {
        let records = OTADeviceRecords(store: MemoryStore(), account: harness.account)
        let transport = OTAHarness.loopback(to: harness.server.with(front))
        return Device(
            records: records,
            client: OTAClient(
                records: records, deviceID: "phone", transport: transport, codec: XMLPlistCodec(),
                dataclasses: Dataclass.all, configuration: .init(retry: retry ?? self.retry, sleeper: clock)))
    }

    @Test("a server that answers 503 twice, then lets the message through: the client waits on the clock, sends the same bytes again and syncs")
    func serviceUnavailableTwice() async throws {
        let front = ScriptedFront(answering: [.text("busy", status: 503), .text("busy", status: 503)], sleeper: clock)
        let phone = phone(behind: front)
        try await phone.add(["first name": "Ada"])
        let sync = Task { try await phone.sync() }

        await clock.waitForSleepers(1)
        #expect(front.requests.count == 1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(front.requests.count == 2)
        clock.advance(by: .seconds(2))

        let report = try await sync.value
        #expect(report.sentItems == 1)
        #expect(report.roundTrips == front.requests.count)
        let bodies = front.requests.map(\.body)
        #expect(bodies.count >= 3)
        #expect(bodies[1] == bodies[0] && bodies[2] == bodies[0], "a message is sent again byte for byte")
        #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["first name": "Ada"]])
    }

    @Test("a 500 is retried too: an OTA message is idempotent, the server answers a repeat from its reply cache")
    func serverErrorIsRetried() async throws {
        let front = ScriptedFront(answering: [.text("oops", status: 500)], sleeper: clock)
        let phone = phone(behind: front)
        try await phone.add(["first name": "Ada"])
        let sync = Task { try await phone.sync() }

        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(try await sync.value.sentItems == 1)
        #expect(try await harness.serverRecords(Dataclass.contacts).count == 1)
    }

    @Test("a 429 with Retry-After: 2 makes the client wait 2 s before it sends the message again")
    func tooManyRequests() async throws {
        let front = ScriptedFront(
            answering: [SyncServiceError(status: 429, message: "slow down", retryAfter: .seconds(2)).response], sleeper: clock)
        let phone = phone(behind: front)
        try await phone.add(["first name": "Ada"])
        let sync = Task { try await phone.sync() }

        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(1_999))
        #expect(clock.sleeperCount == 1)
        #expect(front.requests.count == 1)
        clock.advance(by: .milliseconds(1))

        #expect(try await sync.value.sentItems == 1)
        #expect(front.requests.count >= 2)
    }

    @Test("a 400 is not retried: the sync fails at once with a SyncClientError carrying the status")
    func badRequestIsNotRetried() async throws {
        let front = ScriptedFront(answering: [SyncServiceError.badRequest("not a message").response], sleeper: clock)
        let phone = phone(behind: front)
        let error = await #expect(throws: SyncClientError.self) { try await phone.sync() }
        #expect(error?.code == .rejected)
        #expect(error?.status == 400)
        #expect(error?.message.hasPrefix("POST /ota: server answered 400") == true)
        #expect(front.requests.count == 1)
        #expect(clock.sleeperCount == 0)
    }

    @Test("a message that gets no answer, with no retries left, fails the sync with a SyncClientError")
    func lostAnswerIsASyncClientError() async throws {
        let front = ScriptedFront(sleeper: clock)
        let records = OTADeviceRecords(store: MemoryStore(), account: harness.account)
        let faults = FaultInjectingMiddleware(plan: .scripted([.cutAfterProcessing]))
        let transport = OTAHarness.loopback(to: harness.server.with(front))
        let client = OTAClient(
            records: records, deviceID: "phone", transport: transport.with(faults), codec: XMLPlistCodec(),
            dataclasses: Dataclass.all, configuration: .init(retry: .none, sleeper: clock))
        let error = await #expect(throws: SyncClientError.self) { try await client.sync() }
        #expect(error?.code == .connectionFailed)
        #expect(front.requests.count == 1)
    }

    @Test("two sync() calls at once run one after the other: the second sends nothing until the first is done")
    func concurrentSyncsDoNotOverlap() async throws {
        let front = ScriptedFront(sleeper: clock, holdFor: .seconds(1))
        let phone = phone(behind: front)
        try await phone.add(["first name": "Ada"])
        let finished = FinishedCount()

        let first = Task {
            defer { finished.add() }
            return try await phone.sync()
        }
        await clock.waitForSleepers(1)  // the first session's message is in the server
        let second = Task {
            defer { finished.add() }
            return try await phone.sync()
        }
        #expect(await yieldUntil { phone.client.syncGate.waitingCount == 1 }, "the second sync never reached the gate")
        #expect(front.requests.count == 1)

        // Let each message held in the server go, until both sessions are over.
        while await yieldUntil({ finished.count == 2 || clock.sleeperCount > 0 }), finished.count < 2 {
            clock.advance(by: .seconds(1))
        }
        let firstReport = try await first.value
        let secondReport = try await second.value
        #expect(firstReport.sentItems == 1)
        #expect(secondReport.sentItems == 0)
        #expect(front.requests.count == firstReport.roundTrips + secondReport.roundTrips)
        #expect(front.mostInFlight == 1)
        #expect(try await harness.serverRecords(Dataclass.contacts).count == 1)
    }

    @Test("the device's state is stored as before, so existing stores still read: the same names and values, the journal in place of ota.sent, the LUIDs the server knows an entry each")
    func stateStoredAsBefore() async throws {
        let store = MemoryStore()
        let phone = harness.device("phone", store: store)
        let luid = try await phone.add(["first name": "Ada"])
        try await phone.sync()

        let peer = PeerID("ota-server")
        let contacts = Dataclass.contacts
        let stored = try await store.transaction(for: harness.account) { tx in
            (
                anchor: try await tx.metadata("ota.anchor.\(contacts)", for: peer),
                device: try await tx.metadata("ota.device-anchor.\(contacts)", for: peer),
                sent: try await tx.metadata("ota.sent.\(contacts)", for: peer),
                ids: try await tx.metadata("ota.ids.\(contacts)", for: peer),
                mode: try await tx.metadata("ota.mode.\(contacts)", for: peer),
                pending: try await tx.metadata("ota.pending-idmap.\(contacts)", for: peer),
                conflicts: try await tx.metadata("ota.conflicts.\(contacts)", for: peer)
            )
        }
        #expect(stored.anchor?.stringValue?.isEmpty == false)
        #expect(stored.device?.dictionaryValue?.keys.sorted() == ["count", "generation"])
        #expect(stored.device?["count"] == .integer(1))
        #expect(stored.device?["generation"]?.stringValue?.hasPrefix("d") == true)
        #expect(stored.sent == nil)  // what must be sent is the journal's, empty once the server took it
        #expect(try await store.transaction(for: harness.account) { tx in try await tx.journal.entries() }.isEmpty)
        // The LUIDs the server knows were one value, `ota.ids.<dataclass>`; they are an entry each now, and a
        // store with the old value takes it over on its next sync (OTAIDMapTests).
        #expect(stored.ids == nil)
        let entry = try await store.transaction(for: harness.account) { tx in
            try await tx.metadata("ota.ids\u{1F}\(contacts)\u{1F}l\u{1F}\(luid)", for: peer)
        }
        #expect(entry?.stringValue != nil)
        #expect(stored.mode == nil && stored.pending == nil && stored.conflicts == nil)

        // A store written this way reads back: the next sync is fast and sends nothing again.
        let next = try await phone.sync()
        #expect(next.modes[contacts] == .fast)
        #expect(next.sentItems == 0)
    }

    @Test("a store written before the journal: its changes after ota.sent become journal entries and go to the server")
    func storeBeforeTheJournal() async throws {
        let store = MemoryStore()
        let phone = harness.device("phone", store: store)
        try await phone.sync()
        let contacts = Dataclass.contacts
        let before = try await store.scoped(to: harness.account).latestPosition()
        // As a device before the journal wrote it: the record alone, and the position its changes were sent up to.
        try await store.transaction(for: harness.account) { tx in
            try await tx.put(
                SyncRecord(
                    collection: CollectionID(contacts), id: "L-old", fields: OTARecord(entity: Dataclass.contact, fields: ["first name": "Ada"]).storedFields,
                    version: RecordVersion(modifiedAt: Date(), node: OTADeviceRecords.localNode)))
            try await tx.setMetadata(.integer(Int64(before.rawValue)), "ota.sent.\(contacts)", for: "ota-server")
        }
        #expect(try await phone.sync().sentItems == 1)
        #expect(try await harness.serverRecords(contacts).map(\.fields) == [["first name": "Ada"]])
        #expect(try await store.transaction(for: harness.account) { tx in try await tx.metadata("ota.sent.\(contacts)", for: "ota-server") } == nil)
        #expect(try await phone.sync().sentItems == 0)
    }
}
