import Aquasync
import Foundation
import PostgresNIO
import SyncCore
import SyncHTTPClient
import SyncJSON
import SyncTesting
import Testing
import TestSupport

extension ReplicaReadTests {
    @Test(
        "anchorage serve --postgres-replica with --postgres-connections 2 (one to listen, one to work): a device pulls another's note, and /metrics counts where the changes were read"
    )
    func serveReadsChangesThroughTheReplicaOption() async throws {
        let executable = try #require(
            ChildProcess.builtExecutable(named: "anchorage"), "the anchorage executable was not found beside the test bundle")
        let standby = try await replicaReadStandby.standby
        let address = try #require(await TestPostgresServer.address)
        let database = "replica_serve_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await administer("CREATE DATABASE \(database)")
        // The test server commits asynchronously; a commit then reaches the standby only when PostgreSQL's WAL
        // writer writes it, often later than the server's wait for the standby.
        try await administer("ALTER DATABASE \(database) SET synchronous_commit = on")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("replica-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let users = folder.appendingPathComponent("users.txt").path
        let token = "replica-serve-\(UUID().uuidString)"
        let added = try await ChildProcess.run(executable, arguments: ["users", "add", "ada", "--file", users, "--token", token])
        try #require(added.status == 0, "anchorage users add failed: \(added.errorText)")

        let server = try ChildProcess.start(
            executable,
            arguments: [
                "serve", "--port", "0", "--users", users, "--log-level", "warning",
                "--store", "postgres://\(address.username)@\(address.host):\(address.port)/\(database)",
                "--postgres-replica", "postgres://\(address.username)@127.0.0.1:\(standby.port)/\(database)",
                "--postgres-connections", "2",
            ])
        do {
            let url = try await server.waitForOutputLine { line in
                line.split(separator: " ").first { $0.hasPrefix("http://") }.flatMap { URL(string: String($0)) }
            }
            let transport = HTTPClientTransport(baseURL: url).with(CredentialsMiddleware(.bearer(token)))
            let devices = (0..<2).map { _ in
                AquasyncClient(store: MemoryStore(), transport: transport, codec: JSONCodec(), configuration: .init(retry: .none))
            }
            let gid = try await devices[0].save("Note", fields: ["text": "from the first device"])
            _ = try await devices[0].sync()
            _ = try await devices[1].sync()
            #expect(try await devices[1].objects("Note").map(\.gid) == [gid])

            let metrics = try await HTTPClientTransport(baseURL: url).send(SyncRequest(method: .get, path: "/metrics"))
            let reads = String(decoding: metrics.body, as: UTF8.self).split(separator: "\n")
                .filter { $0.hasPrefix("anchorage_postgres_change_reads_total{") }
                .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            // Which server answered depends on how soon the standby replays (the other tests' commits are
            // asynchronous, and the standby waits for them too); that the pulls were counted, and answered
            // right, does not.
            #expect(reads.reduce(0, +) >= 1, "no read of changes counted in /metrics")
        } catch {
            _ = try? await server.terminate()
            try? await administer("DROP DATABASE IF EXISTS \(database)")
            throw error
        }
        let status = try await server.terminate()
        #expect(status == 0, "the server stopped with status \(status): \(String(decoding: server.standardError, as: UTF8.self))")
        try await administer("DROP DATABASE IF EXISTS \(database)")
    }

    /// Runs `sql` on the test server's maintenance database.
    private func administer(_ sql: String) async throws {
        try await withTestDatabase(maximumConnections: 1) { database in
            _ = try await database.client.query(PostgresQuery(unsafeSQL: sql))
        }
    }
}
