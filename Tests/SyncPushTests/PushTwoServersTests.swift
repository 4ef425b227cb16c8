import Foundation
import SyncCore
import SyncPush
import SyncTesting
import TestSupport
import Testing

/// Two `anchorage serve` processes on one PostgreSQL database: a commit through one reaches a device listening on the other.
@Suite(
    "Push across two anchorage serve processes on PostgreSQL",
    .enabled("no PostgreSQL server (see the reason printed above)") { await TestPostgresServer.isAvailable })
struct PushTwoServersTests {
    @Test("A writes through one server, B listens on the other, and is notified")
    func notifiedAcrossProcesses() async throws {
        let address = try #require(await TestPostgresServer.address)
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("push-two-servers")
        // An account of its own: the servers use the database's default schema, which other tests may share.
        let account = "push-" + UUID().uuidString.prefix(8).lowercased()
        let users = folder.path("users.txt")
        let added = try await tool.run(["users", "add", account, "--file", users], input: Array("secret\n".utf8))
        try #require(added.status == 0, "\(added.errorText)")
        let store = "postgres://\(address.username)@\(address.host):\(address.port)/\(address.database)"
        let one = try await tool.serve(["--store", store, "--users", users, "--log-level", "warning"])
        let two = try await tool.serve(["--store", store, "--users", users, "--log-level", "warning"])

        let a = PushDevice(.aquasync, token: "device-a", server: one.url, account: account)
        let b = PushDevice(.aquasync, token: "device-b", server: two.url, account: account)
        let pushB = b.pushClient(server: two.url, account: account)
        let log = await EventLog.recording(pushB)
        let run = Task { try await pushB.run() }
        try await log.wait(for: "B's first sync") { $0.isSync(of: "aquasync/Contact", .resync) }

        try await a.write("written through the first server")
        try await log.wait(for: "B's notified sync through the second server") { $0.isSync(of: "aquasync/Contact", .notified) }
        #expect(try await b.names() == ["written through the first server"])
        run.cancel()
        _ = try? await run.value
        for server in [one, two] {
            #expect(try await server.process.terminate() == 0, "\(String(decoding: server.process.standardError, as: UTF8.self))")
        }
    }
}
