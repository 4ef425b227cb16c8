import Aquasync
import Foundation
import SyncCore
import SyncSQLite
import SyncTesting
import Synchronization
import TestSupport
import Testing

@testable import SyncPush

/// What a device misses while away, and how it gets it back.
@Suite("Push: queue overflow, server restart, cut stream")
struct PushRecoveryTests {
    /// B is away while A makes more edits than B's queue keeps; B comes back.
    /// Returns the names B holds and the server's names.
    private func awayWhileQueueOverflows(ignoringRetained: Bool) async throws -> (b: [String], server: [String], retained: Bool) {
        let server = try await PushTestServer.start(store: try SQLiteStore.inMemory(), configuration: .init(queueLength: 4))
        defer { Task { await server.stop() } }
        let a = PushDevice(.aquasync, token: "device-a", server: server.url)
        let b = PushDevice(.aquasync, token: "device-b", server: server.url)
        let pushB = b.pushClient(server: server.url)
        pushB.ignoresRetainedForTesting.store(ignoringRetained, ordering: .relaxed)
        let log = await EventLog.recording(pushB)
        var run = Task { try await pushB.run() }
        try await log.wait(for: "B's first notification") { $0.isNotification }
        if !ignoringRetained { try await log.wait(for: "B's first sync") { $0.isSync(of: "aquasync/Contact", .resync) } }
        run.cancel()
        _ = try? await run.value
        let key = PushHub.Key(account: "ada", device: "device-b")

        for index in 0..<10 { try await a.write("contact \(index)") }
        #expect(await server.push.hub.queued(key) == 4)  // the last 4 of 10: 6 dropped

        let back = await log.count
        run = Task { try await pushB.run() }
        defer { run.cancel() }
        let first = try await log.wait(for: "the first notification after B's return", from: back) { $0.isNotification }
        guard case .notified(let notification) = first else { throw PushError(.invalidMessage, "the first event is not a notification: \(first)") }
        if !ignoringRetained {
            try await log.wait(for: "B's resync", from: back) { $0.isSync(of: "aquasync/Contact", .resync) }
        }
        let serverNames = try await a.aquasync.objects("Contact").compactMap { $0.fields["name"]?.stringValue }.sorted()
        return (try await b.names(), serverNames, notification.retained && notification.token == nil)
    }

    @Test("B away while more than N notifications arrive: a retained notification, a resync, and exactly the server's data")
    func overflowResyncsEverything() async throws {
        let outcome = try await awayWhileQueueOverflows(ignoringRetained: false)
        #expect(outcome.retained)
        #expect(outcome.server.count == 10)
        #expect(outcome.b == outcome.server)
    }

    @Test("control: a client that ignores the retained flag loses the dropped notifications' changes")
    func ignoringRetainedLosesChanges() async throws {
        let outcome = try await awayWhileQueueOverflows(ignoringRetained: true)
        #expect(outcome.retained)
        #expect(outcome.server.count == 10)
        #expect(outcome.b != outcome.server)
    }

    @Test("B away while fewer than N arrive: they are replayed, the first flagged retained")
    func keptNotificationsAreReplayed() async throws {
        let server = try await PushTestServer.start(store: MemoryStore(), configuration: .init(queueLength: 8))
        let a = PushDevice(.appsync, token: "device-a", server: server.url)
        let b = PushDevice(.appsync, token: "device-b", server: server.url)
        let pushB = b.pushClient(server: server.url)
        let log = await EventLog.recording(pushB)
        var run = Task { try await pushB.run() }
        try await log.wait(for: "B's first sync") { $0.isSync(of: "appsync/booking", .resync) }
        run.cancel()
        _ = try? await run.value
        try await a.write("one")
        try await a.write("two")
        let back = await log.count
        run = Task { try await pushB.run() }
        defer { run.cancel() }
        try await log.wait(for: "B's resync", from: back) { $0.isSync(of: "appsync/booking", .resync) }
        let replayed = await log.events.dropFirst(back).compactMap { event -> PushNotification? in
            if case .notified(let notification) = event { notification } else { nil }
        }
        #expect(replayed.count == 2)
        #expect(replayed.map(\.retained) == [true, false])
        #expect(replayed.allSatisfy { $0.token != nil })
        #expect(try await b.names() == ["one", "two"])
        await server.stop()
    }

    @Test("the server restarts while B is connected: B reconnects and misses nothing")
    func serverRestart() async throws {
        let store = try SQLiteStore.inMemory()
        let port = try LoopbackSocket.restartablePort()
        var server = try await PushTestServer.start(store: store, port: port)
        let clock = TestClock()
        let b = PushDevice(.ota, token: "device-b", server: server.url)
        let pushB = b.pushClient(server: server.url, sleeper: clock)
        let log = await EventLog.recording(pushB)
        let run = Task { try await pushB.run() }
        defer { run.cancel() }
        try await log.wait(for: "B's first sync") { $0.isSync(of: b.stack.collection, .resync) }

        let down = await log.count
        await server.stop()
        try await log.wait(for: "B losing the stream", from: down) { $0.isDisconnect }
        server = try await PushTestServer.start(store: store, port: port)
        defer { Task { [server] in await server.stop() } }
        // Written while B is not connected: the new server has no registration of B to queue it for.
        let a = PushDevice(.ota, token: "device-a", server: server.url)
        try await a.write("written during the restart")

        let back = await log.count
        await clock.waitForSleepers(2)  // B's backoff, and its poll schedule
        clock.advance(by: .milliseconds(100))
        try await log.wait(for: "B's resync after the restart", from: back) { $0.isSync(of: b.stack.collection, .resync) }
        #expect(try await b.names() == ["written during the restart"])
    }

    @Test("the WebSocket is cut in the middle of a notification: B reconnects and misses nothing")
    func cutMidNotification() async throws {
        let server = try await PushTestServer.start(store: try SQLiteStore.inMemory())
        defer { Task { await server.stop() } }
        let clock = TestClock()
        let a = PushDevice(.aquasync, token: "device-a", server: server.url)
        let b = PushDevice(.aquasync, token: "device-b", server: server.url)
        let pushB = b.pushClient(server: server.url, sleeper: clock)
        let log = await EventLog.recording(pushB)
        let run = Task { try await pushB.run() }
        defer { run.cancel() }
        try await log.wait(for: "B's first sync") { $0.isSync(of: "aquasync/Contact", .resync) }

        let cut = Cut()
        server.push.cutMidMessage.withLock { $0 = { notification in notification.token != nil && cut.once() } }
        let before = await log.count
        try await a.write("sent while the stream is cut")
        try await log.wait(for: "B losing the stream", from: before) { $0.isDisconnect }
        #expect(await log.events.dropFirst(before).contains { $0.isNotification } == false)  // half a message is no message

        await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(100))
        try await log.wait(for: "B's resync after reconnecting", from: before) { $0.isSync(of: "aquasync/Contact", .resync) }
        #expect(try await b.names() == ["sent while the stream is cut"])
    }
}

/// True the first time only.
final class Cut: Sendable {
    private let done = Atomic(false)
    func once() -> Bool { !done.exchange(true, ordering: .relaxed) }
}
