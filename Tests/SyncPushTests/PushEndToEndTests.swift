import Foundation
import SyncCore
import SyncSQLite
import SyncTesting
import TestSupport
import Testing

@testable import SyncPush

/// Two devices and a server over HTTP and WebSocket: an edit on A reaches B through B's push client alone.
@Suite("Push end to end")
struct PushEndToEndTests {
    @Test("an edit on A is applied on B by its push client, and A is not notified", arguments: PushDevice.Stack.allCases)
    func editOnAReachesB(_ stack: PushDevice.Stack) async throws {
        let server = try await PushTestServer.start(store: try SQLiteStore.inMemory())
        let a = PushDevice(stack, token: "device-a", server: server.url)
        let b = PushDevice(stack, token: "device-b", server: server.url)
        let (pushA, pushB) = (a.pushClient(server: server.url), b.pushClient(server: server.url))
        let (logA, logB) = (await EventLog.recording(pushA), await EventLog.recording(pushB))
        let runs = [Task { try await pushA.run() }, Task { try await pushB.run() }]
        defer { for run in runs { run.cancel() } }
        // The first connection syncs everything once: the server cannot know what the device missed before.
        try await logA.wait(for: "A's first sync") { $0.isSync(of: stack.collection, .resync) }
        try await logB.wait(for: "B's first sync") { $0.isSync(of: stack.collection, .resync) }
        let aEvents = await logA.count

        try await a.write("Ada Lovelace")

        try await logB.wait(for: "B's sync after A's edit") { $0.isSync(of: stack.collection, .notified) }
        #expect(try await b.names() == ["Ada Lovelace"])
        // A wrote: the server queued nothing for A, and A was told nothing.
        #expect(await server.push.hub.queued(PushHub.Key(account: "ada", device: "device-a")) == 0)
        #expect(await logA.events.dropFirst(aEvents).contains { $0.isNotification } == false)
        await server.stop()
    }

    @Test("a device registers only for its own account: Bob's commits do not reach Ada's devices")
    func accountsStayApart() async throws {
        let server = try await PushTestServer.start(store: MemoryStore())
        let bob = PushDevice(.aquasync, token: "bob-phone", server: server.url, account: "bob")
        let ada = PushDevice(.aquasync, token: "ada-phone", server: server.url)
        let pushAda = ada.pushClient(server: server.url)
        let log = await EventLog.recording(pushAda)
        let run = Task { try await pushAda.run() }
        defer { run.cancel() }
        try await log.wait(for: "Ada's first sync") { $0.isSync(of: "aquasync/Contact", .resync) }
        try await bob.write("Bob's contact")
        #expect(await server.push.hub.queued(PushHub.Key(account: "ada", device: "ada-phone")) == 0)
        #expect(try await ada.names() == [])
        await server.stop()
    }
}
