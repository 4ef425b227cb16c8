import AppSync
import Foundation
import SyncCore
import SyncHTTPClient
import SyncTesting
import TestSupport
import Testing
import Synchronization

/// The sync state a UI shows (`client.syncStatus`): idle, syncing, retrying, up to date with the conflicts
/// waiting, offline.
@Suite("appSync: the sync state for a UI")
struct AppSyncStatusTests {
    /// Answers the first request 503, then passes every request on.
    final class FirstRequestUnavailable: SyncServiceMiddleware {
        let answered = Mutex(0)

        func intercept(
            _ request: SyncRequest, context: ServiceContext,
            next: @Sendable (SyncRequest, ServiceContext) async throws -> SyncResponse
        ) async throws -> SyncResponse {
            let count = answered.withLock { $0 += 1; return $0 }
            if count == 1 { return SyncResponse(status: 503) }
            return try await next(request, context)
        }
    }

    @Test("idle, then syncing, retrying after a 503, and up to date with the conflicts that wait")
    func statesOfASync() async throws {
        let harness = AppSyncHarness()
        let sleeper = TestClock()
        let phone = harness.client(
            harness.loopback(front: FirstRequestUnavailable()), conflictPolicy: .askUser,
            retry: RetryPolicy(maxAttempts: 3, initialDelay: .seconds(2), jitter: 0), sleeper: sleeper)
        #expect(phone.syncStatus.current.activity == .idle)
        var states = phone.syncStatus.states().makeAsyncIterator()
        #expect(await states.next()?.activity == .idle)

        try await phone.save("booking", fields: ["pk": 1, "guest": "Ada"])
        let syncing = Task { try await phone.sync() }
        await sleeper.waitForSleepers()
        guard case .retrying(let wait, let reason) = phone.syncStatus.current.activity else {
            Issue.record("expected retrying, got \(phone.syncStatus.current.activity)")
            return
        }
        #expect(wait == .seconds(2))
        #expect(reason.contains("503"))
        sleeper.advance(by: .seconds(2))
        _ = try await syncing.value
        #expect(phone.syncStatus.current.activity == .upToDate)
        #expect(phone.syncStatus.current.lastSuccess != nil)
        #expect(phone.syncStatus.current.conflictsWaiting == 0)
        #expect(await states.next()?.activity == .upToDate, "the latest state waits for a slow consumer")

        // Another device changes the booking while the phone changes it too: the phone's conflict waits.
        let laptop = harness.client(harness.loopback(), conflictPolicy: .askUser)
        try await laptop.sync()
        let guid = try #require(try await laptop.objects("booking").first?.guid)
        try await laptop.save("booking", guid: guid, fields: ["pk": 1, "guest": "Ada Lovelace"])
        try await laptop.sync()
        try await phone.save("booking", guid: guid, fields: ["pk": 1, "guest": "Ada King"])
        try await phone.sync()
        #expect(phone.syncStatus.current.conflictsWaiting == 1)
    }

    @Test("a server that cannot be reached makes the state offline, with the reason")
    func offline() async throws {
        let harness = AppSyncHarness()
        let unreachable = HTTPClientTransport(baseURL: URL(string: "http://127.0.0.1:1")!)
        let phone = harness.client(unreachable, conflictPolicy: .askUser, retry: .none)
        try await phone.save("booking", fields: ["pk": 2, "guest": "Grace"])
        await #expect(throws: SyncClientError.self) { try await phone.sync() }
        guard case .offline(let reason) = phone.syncStatus.current.activity else {
            Issue.record("expected offline, got \(phone.syncStatus.current.activity)")
            return
        }
        #expect(reason.contains("127.0.0.1:1"))
        #expect(phone.syncStatus.current.lastSuccess == nil)
    }
}
