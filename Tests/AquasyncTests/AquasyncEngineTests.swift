import Aquasync
import SyncCore
import SyncTesting
import TestSupport
import Testing

@Suite("Aquasync on the client engine: retries on a test clock, one sync at a time")
struct AquasyncEngineTests {
    let harness = AquasyncHarness()
    let clock = TestClock()
    /// Exact waits (no jitter): 1 s before the first retry, 2 s before the second.
    let retry = RetryPolicy(maxAttempts: 5, initialDelay: .seconds(1), multiplier: 2, jitter: 0)

    /// A device whose requests pass `front` on their way into the harness's server; it waits between retries on `clock`.
    func device(behind front: ScriptedFront) -> AquasyncClient {
        AquasyncClient(
            store: MemoryStore(), transport: harness.loopback(front: front), codec: TestCodec.json.codec,
            configuration: .init(retry: retry, clock: clock.wall, sleeper: clock))
    }

    func described(_ front: ScriptedFront) -> [String] {
        front.requests.map { "\($0.method) \($0.path) at \($0.arrival)" }
    }

    @Test("a server that answers 503 twice, then lets requests through: the sync waits 1 s and 2 s on the clock and completes")
    func serviceUnavailableTwice() async throws {
        let front = ScriptedFront(answering: [.text("busy", status: 503), .text("busy", status: 503)], sleeper: clock)
        let device = device(behind: front)
        let gid = try await device.save("Contact", fields: ["name": "Ada"])
        let sync = Task { try await device.sync() }

        await clock.waitForSleepers(1)
        #expect(front.requests.count == 1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(front.requests.count == 2)
        clock.advance(by: .seconds(2))

        let report = try await sync.value
        #expect(report.pushed == 1)
        // One request a sync (the pack goes on the condition that nothing waits to be pulled), tried three times.
        #expect(
            described(front) == ["POST /deltas at 0.0 seconds", "POST /deltas at 1.0 seconds", "POST /deltas at 3.0 seconds"])
        #expect(try await device.object("Contact", gid: gid)?.isDirty == false)
        #expect(try await harness.serverStore.changes(for: harness.account, after: .start, in: nil, limit: 10).records.count == 1)
    }

    @Test("a 429 with Retry-After: 2 makes the sync wait exactly 2 s before it asks again")
    func tooManyRequests() async throws {
        let front = ScriptedFront(
            answering: [SyncServiceError(status: 429, message: "slow down", retryAfter: .seconds(2)).response], sleeper: clock)
        let device = device(behind: front)
        try await device.save("Contact", fields: ["name": "Ada"])
        let sync = Task { try await device.sync() }

        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(1_999))
        #expect(clock.sleeperCount == 1)
        #expect(front.requests.count == 1)
        clock.advance(by: .milliseconds(1))

        #expect(try await sync.value.pushed == 1)
        #expect(front.requests.map(\.arrival) == [.zero, .seconds(2)])
    }

    @Test("a 400 is not retried: the sync fails at once with the status and the server's message, and the record stays dirty")
    func badRequestIsNotRetried() async throws {
        let front = ScriptedFront(answering: [SyncServiceError.badRequest("that pack is odd").response], sleeper: clock)
        let device = device(behind: front)
        let gid = try await device.save("Contact", fields: ["name": "Ada"])
        let error = await #expect(throws: SyncClientError.self) { try await device.sync() }
        #expect(error?.code == .rejected)
        #expect(error?.status == 400)
        #expect(error?.message == "POST /deltas: server answered 400: that pack is odd")
        #expect(front.requests.count == 1)
        #expect(clock.sleeperCount == 0)
        #expect(try await device.object("Contact", gid: gid)?.isDirty == true)
    }

    @Test("two sync() calls at once run one after the other: the server never has two of the device's requests at once")
    func concurrentSyncsDoNotOverlap() async throws {
        let front = ScriptedFront(sleeper: clock, holdFor: .seconds(1))
        let device = device(behind: front)
        try await device.save("Contact", fields: ["name": "Ada"])

        let first = Task { try await device.sync() }
        await clock.waitForSleepers(1)                      // the first sync's push is in the server
        let second = Task { try await device.sync() }
        #expect(await yieldUntil { device.syncGate.waitingCount == 1 }, "the second sync never reached the gate")
        #expect(described(front) == ["POST /deltas at 0.0 seconds"])

        clock.advance(by: .seconds(1))                      // push answered: nothing waits to be pulled
        #expect(try await first.value.pushed == 1)

        await clock.waitForSleepers(1)                      // only now the second sync's pull
        #expect(described(front) == ["POST /deltas at 0.0 seconds", "GET /deltas/from:1 at 1.0 seconds"])
        clock.advance(by: .seconds(1))
        let report = try await second.value
        #expect(report.pulled == 0 && report.pushed == 0)
        #expect(front.mostInFlight == 1)
    }
}
