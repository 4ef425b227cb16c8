import AppSync
import SyncCore
import SyncTesting
import TestSupport
import Testing

extension ScriptedFront {
    /// Every request that arrived, as "METHOD path".
    var requestLines: [String] { requests.map { "\($0.method) \($0.path)" } }
}

@Suite("appSync on the client engine: retries, one sync at a time")
struct AppSyncEngineTests {
    let harness = AppSyncHarness()
    let clock = TestClock()
    let retry = RetryPolicy(maxAttempts: 5, initialDelay: .seconds(1), multiplier: 2, jitter: 0.5)

    @Test("a server that answers 503 twice, then 200: the sync waits on the clock, retries and completes")
    func serviceUnavailableTwice() async throws {
        let front = ScriptedFront(answering: [.text("busy", status: 503), .text("busy", status: 503)], sleeper: clock)
        let client = harness.client(harness.loopback(front: front), conflictPolicy: ServerWinsPolicy(), retry: retry, sleeper: clock)
        let guid = try await client.save("booking", fields: ["pk": "2014-05-10", "name": "apples"])
        let sync = Task { try await client.sync() }

        await clock.waitForSleepers(1)
        #expect(front.requestLines == ["GET /rest/booking/list/0"])
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(front.requests.count == 2)
        clock.advance(by: .seconds(2))

        let report = try await sync.value
        #expect(report.uploaded == 1)
        #expect(front.requestLines == Array(repeating: "GET /rest/booking/list/0", count: 3) + ["POST /rest/booking/update"])
        #expect(try await harness.serverObjects()[guid]?.fields["name"] == "apples")
    }

    @Test("a 429 with Retry-After: 2 makes the sync wait 2 s before it asks again")
    func tooManyRequests() async throws {
        let front = ScriptedFront(
            answering: [SyncServiceError(status: 429, message: "slow down", retryAfter: .seconds(2)).response], sleeper: clock)
        let client = harness.client(harness.loopback(front: front), conflictPolicy: ServerWinsPolicy(), retry: retry, sleeper: clock)
        try await harness.serverSave(guid: "S1", fields: ["pk": "2014-05-10", "name": "server"])
        let sync = Task { try await client.sync() }

        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(1_999))
        #expect(clock.sleeperCount == 1)
        #expect(front.requests.count == 1)
        clock.advance(by: .milliseconds(1))

        #expect(try await sync.value.downloaded == 1)
        #expect(front.requests.count == 2)
    }

    @Test("a 400 is not retried: the sync fails at once with the status and the server's message")
    func badRequestIsNotRetried() async throws {
        let front = ScriptedFront(answering: [SyncServiceError.badRequest("that counter is odd").response], sleeper: clock)
        let client = harness.client(harness.loopback(front: front), conflictPolicy: ServerWinsPolicy(), retry: retry, sleeper: clock)
        let error = await #expect(throws: SyncClientError.self) { try await client.sync() }
        #expect(error?.code == .rejected)
        #expect(error?.status == 400)
        #expect(error?.message == "GET /rest/booking/list/0: server answered 400: that counter is odd")
        #expect(front.requests.count == 1)
        #expect(clock.sleeperCount == 0)
    }

    @Test("two sync() calls at once run one after the other: the second sends nothing until the first is done")
    func concurrentSyncsDoNotOverlap() async throws {
        let front = ScriptedFront(sleeper: clock, holdFor: .seconds(1))
        let client = harness.client(harness.loopback(front: front), conflictPolicy: ServerWinsPolicy(), retry: retry, sleeper: clock)
        try await client.save("booking", fields: ["pk": "2014-05-10", "name": "apples"])

        let first = Task { try await client.sync() }
        await clock.waitForSleepers(1)                      // the first sync's list is in the server
        let second = Task { try await client.sync() }
        #expect(await yieldUntil { client.syncGate.waitingCount == 1 }, "the second sync never reached the gate")
        #expect(front.requestLines == ["GET /rest/booking/list/0"])

        clock.advance(by: .seconds(1))                      // list answered; the upload goes in
        await clock.waitForSleepers(1)
        #expect(front.requestLines == ["GET /rest/booking/list/0", "POST /rest/booking/update"])
        clock.advance(by: .seconds(1))
        #expect(try await first.value.uploaded == 1)

        await clock.waitForSleepers(1)                      // only now the second sync's list
        clock.advance(by: .seconds(1))
        #expect(try await second.value == AppSyncClient.Report())
        #expect(front.requestLines == ["GET /rest/booking/list/0", "POST /rest/booking/update", "GET /rest/booking/list/1"])
        #expect(front.mostInFlight == 1)
    }
}

@Suite("appSync on the client engine over HTTP")
struct AppSyncEngineHTTPTests {
    @Test("Retry-After travels over HTTP: the server writes it, the client transport reads it, the sync waits for it")
    func retryAfterOverHTTP() async throws {
        let harness = AppSyncHarness()
        let clock = TestClock()
        let front = ScriptedFront(
            answering: [SyncServiceError(status: 503, message: "maintenance", retryAfter: .seconds(7)).response], sleeper: clock)
        try await harness.withTransport(.http, front: front) { transport in
            let client = harness.client(
                transport, conflictPolicy: ServerWinsPolicy(), retry: RetryPolicy(jitter: 0), sleeper: clock)
            let sync = Task { try await client.sync() }
            await clock.waitForSleepers(1)
            clock.advance(by: .milliseconds(6_999))
            #expect(clock.sleeperCount == 1)
            clock.advance(by: .milliseconds(1))
            _ = try await sync.value
            #expect(front.requests.count == 2)
        }
    }
}
