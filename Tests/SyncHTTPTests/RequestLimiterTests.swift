import Foundation
import Synchronization
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncTesting
import Testing

/// Sleeps an hour on a test clock, unless cancelled, then answers 204; counts the cancellations.
private struct SleepingService: SyncService {
    let clock: TestClock
    let cancellations = Cancellations()

    final class Cancellations: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        do {
            try await clock.sleep(for: .seconds(3_600))
        } catch {
            cancellations.add()
            throw error
        }
        return SyncResponse(status: 204)
    }
}

@Suite("Caps on requests in service and their time")
struct RequestLimiterTests {
    /// Runs `body` with a transport to a server whose service sleeps an hour on a test clock, under the given caps.
    private func withSleepingServer(
        maxConcurrentRequests: Int?, requestTimeout: Duration?,
        _ body: (HTTPClientTransport, TestClock, SleepingService) async throws -> Void
    ) async throws {
        let clock = TestClock()
        let service = SleepingService(clock: clock)
        let configuration = HTTPSyncServer.Configuration(
            maxConcurrentRequests: maxConcurrentRequests, requestTimeout: requestTimeout)
        try await HTTPSyncServer.withRunningServer(
            service: service, authenticator: SingleAccountAuthenticator(account: "ada"), configuration: configuration,
            sleeper: clock
        ) { baseURL in
            try await body(HTTPClientTransport(baseURL: baseURL), clock, service)
        }
    }

    @Test("a request slower than the time limit gets 503 with Retry-After and its work is cancelled")
    func timeout() async throws {
        try await withSleepingServer(maxConcurrentRequests: nil, requestTimeout: .seconds(5)) { transport, clock, service in
            let slow = Task { try await transport.send(SyncRequest(method: .get, path: "/slow")) }
            await clock.waitForSleepers(2)  // the service and the time limit
            clock.advance(by: .seconds(5))
            let response = try await slow.value
            #expect(response.status == 503)
            #expect(response.retryAfter == .seconds(1))
            #expect(String(decoding: response.body, as: UTF8.self).contains("took longer"))
            #expect(await yieldUntil { service.cancellations.value == 1 }, "the slow work was cancelled")
        }
    }

    @Test("every request gets its own time limit: overlapping slow requests time out in turn, and a later one after a quiet spell")
    func timeoutsInTurn() async throws {
        try await withSleepingServer(maxConcurrentRequests: nil, requestTimeout: .seconds(5)) { transport, clock, service in
            let first = Task { try await transport.send(SyncRequest(method: .get, path: "/first")) }
            await clock.waitForSleepers(2)  // the first service and the watch over the time limits
            clock.advance(by: .seconds(2))
            let second = Task { try await transport.send(SyncRequest(method: .get, path: "/second")) }
            await clock.waitForSleepers(3)
            clock.advance(by: .seconds(3))
            let firstStatus = try await first.value.status
            #expect(firstStatus == 503, "the first is due at 5 s")
            #expect(await yieldUntil { service.cancellations.value == 1 })
            await clock.waitForSleepers(2)  // the second service and the watch, now until 7 s
            clock.advance(by: .seconds(1))
            #expect(clock.sleeperCount == 2, "the second is not due at 6 s: its service and the watch still sleep")
            clock.advance(by: .seconds(1))
            let secondStatus = try await second.value.status
            #expect(secondStatus == 503, "the second is due at 7 s")
            #expect(await yieldUntil { service.cancellations.value == 2 })
            #expect(await yieldUntil { clock.sleeperCount == 0 }, "with nothing in service, nothing waits on the clock")
            let third = Task { try await transport.send(SyncRequest(method: .get, path: "/third")) }
            await clock.waitForSleepers(2)
            clock.advance(by: .seconds(5))
            let thirdStatus = try await third.value.status
            #expect(thirdStatus == 503, "a request after a quiet spell is watched again")
            #expect(await yieldUntil { service.cancellations.value == 3 })
        }
    }

    @Test("above the cap on requests in service a new one gets 503 with Retry-After; below it, it is served")
    func concurrencyCap() async throws {
        try await withSleepingServer(maxConcurrentRequests: 1, requestTimeout: nil) { transport, clock, _ in
            let first = Task { try await transport.send(SyncRequest(method: .get, path: "/first")) }
            await clock.waitForSleepers(1)
            let second = try await transport.send(SyncRequest(method: .get, path: "/second"))
            #expect(second.status == 503)
            #expect(second.retryAfter == .seconds(1))
            clock.advance(by: .seconds(3_600))
            #expect(try await first.value.status == 204)
            let third = Task { try await transport.send(SyncRequest(method: .get, path: "/third")) }
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(3_600))
            #expect(try await third.value.status == 204, "the place was given back")
        }
    }
}
