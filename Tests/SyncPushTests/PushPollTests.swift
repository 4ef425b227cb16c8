import Foundation
import SyncCore
import SyncTesting
import Synchronization
import TestSupport
import Testing

@testable import SyncPush

/// Collections without push are polled on the server's schedule, on the client's clock.
@Suite("Push: polling where push is not available")
struct PushPollTests {
    @Test("a collection without push syncs on schedule, and stops polling once it has push")
    func pollsUntilPushArrives() async throws {
        let hasPush = Atomic(false)
        let server = try await PushTestServer.start(
            store: MemoryStore(),
            configuration: .init(pollInterval: .seconds(60), hasPush: { _ in hasPush.load(ordering: .relaxed) }))
        defer { Task { await server.stop() } }
        let clock = TestClock()
        let a = PushDevice(.appsync, token: "device-a", server: server.url)
        let b = PushDevice(.appsync, token: "device-b", server: server.url)
        let pushB = b.pushClient(server: server.url, sleeper: clock)
        let log = await EventLog.recording(pushB)
        let run = Task { try await pushB.run() }
        defer { run.cancel() }
        try await log.wait(for: "B's first sync") { $0.isSync(of: "appsync/booking", .resync) }
        #expect(pushB.polled == ["appsync/booking"])

        try await a.write("polled")
        #expect(await server.push.hub.queued(PushHub.Key(account: "ada", device: "device-b")) == 0)  // no push for it
        #expect(try await b.names() == [])
        var mark = await log.count
        await clock.waitForSleepers(1)  // the poll schedule
        clock.advance(by: .seconds(59))
        #expect(await log.count == mark)
        clock.advance(by: .seconds(1))
        try await log.wait(for: "the scheduled sync", from: mark) { $0.isSync(of: "appsync/booking", .poll) }
        #expect(try await b.names() == ["polled"])

        hasPush.store(true, ordering: .relaxed)
        mark = await log.count
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(60))
        try await log.wait(for: "the registration that gives push", from: mark) { event in
            if case .registered(let push, let poll) = event { push == ["appsync/booking"] && poll.isEmpty } else { false }
        }
        #expect(pushB.polled.isEmpty)
        try await a.write("pushed")
        try await log.wait(for: "the notified sync", from: mark) { $0.isSync(of: "appsync/booking", .notified) }
        #expect(await log.events.dropFirst(mark).contains { $0.isSync(of: "appsync/booking", .poll) } == false)
        #expect(try await b.names() == ["polled", "pushed"])
    }
}
