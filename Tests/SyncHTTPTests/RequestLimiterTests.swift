import Foundation
import Synchronization
import SyncCore
import SyncHTTP
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
    @Test("a request slower than the time limit gets 503 with Retry-After and its work is cancelled")
    func timeout() async throws {
        let clock = TestClock()
        let service = SleepingService(clock: clock)
        let configuration = HTTPSyncServer.Configuration(maxConcurrentRequests: nil, requestTimeout: .seconds(5))
        try await HTTPSyncServer.withRunningServer(
            service: service, authenticator: SingleAccountAuthenticator(account: "ada"), configuration: configuration,
            clock: clock
        ) { baseURL in
            let transport = HTTPClientTransport(baseURL: baseURL)
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

    @Test("above the cap on requests in service a new one gets 503 with Retry-After; below it, it is served")
    func concurrencyCap() async throws {
        let clock = TestClock()
        let configuration = HTTPSyncServer.Configuration(maxConcurrentRequests: 1, requestTimeout: nil)
        try await HTTPSyncServer.withRunningServer(
            service: SleepingService(clock: clock), authenticator: SingleAccountAuthenticator(account: "ada"),
            configuration: configuration, clock: clock
        ) { baseURL in
            let transport = HTTPClientTransport(baseURL: baseURL)
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
