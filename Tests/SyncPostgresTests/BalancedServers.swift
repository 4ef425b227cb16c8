#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging
import PostgresNIO
import SyncCore
import SyncPostgres
import SyncTesting
import TestSupport
import Testing

/// Three `anchorage serve` processes on one fresh PostgreSQL database, behind
/// nginx round-robin (``TestNginx``), as a deployment of several processes
/// runs them. A test may kill one with `SIGKILL` and start it again on the same
/// port, while devices sync through the balancer.
actor BalancedServers {
    /// Where devices send their requests: nginx.
    nonisolated let url: URL
    /// The accounts, each with its bearer token.
    nonisolated let tokens: [AccountID: String]
    /// Each process's address, as nginx names it (`127.0.0.1:PORT`).
    nonisolated let addresses: [String]
    nonisolated let nginx: TestNginx
    private let tool: AnchorageTool
    private let database: String
    private let arguments: [String]
    private let folder: TemporaryFolder
    private var processes: [ChildProcess.Running]
    /// How many times a process was killed.
    private(set) var kills = 0
    private var scheduledKills = 0
    private var lastKill: Task<Void, any Error>?

    private init(
        url: URL, tokens: [AccountID: String], addresses: [String], nginx: TestNginx, tool: AnchorageTool, database: String,
        arguments: [String], folder: TemporaryFolder, processes: [ChildProcess.Running]
    ) {
        self.url = url
        self.tokens = tokens
        self.addresses = addresses
        self.nginx = nginx
        self.tool = tool
        self.database = database
        self.arguments = arguments
        self.folder = folder
        self.processes = processes
    }

    /// Runs `body` with three processes on a new database behind nginx, then stops them all and drops
    /// the database, whether `body` returns or throws.
    /// - Parameters:
    ///   - accounts: the accounts of the users file, each with a token of its own.
    ///   - arguments: more arguments for `anchorage serve`.
    static func with<Result: Sendable>(
        accounts: [AccountID], arguments extra: [String] = [], _ body: (BalancedServers) async throws -> Result
    ) async throws -> Result {
        let tool = try AnchorageTool()
        let address = try #require(await TestPostgresServer.address)
        let database = "balanced_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await administer("CREATE DATABASE \(database)")
        let folder = try TemporaryFolder("balanced-servers")
        var processes: [ChildProcess.Running] = []
        var nginx: TestNginx?
        do {
            let users = folder.path("users.txt")
            var tokens: [AccountID: String] = [:]
            for account in accounts {
                let token = "\(account)-\(UUID().uuidString)"
                let added = try await tool.run(["users", "add", account.rawValue, "--file", users, "--token", token])
                try #require(added.status == 0, "anchorage users add failed: \(added.errorText)")
                tokens[account] = token
            }
            // Behind a proxy every request comes from its address: no per-address login limit.
            let arguments =
                [
                    "--store", "postgres://\(address.username)@\(address.host):\(address.port)/\(database)", "--users", users,
                    "--log-level", "error", "--login-failures-per-address", "0",
                ] + extra
            var urls: [URL] = []
            for _ in 0..<3 {
                // On ports no outgoing connection can take while a killed process is down.
                let server = try await tool.serve(arguments, port: LoopbackSocket.restartablePort())
                processes.append(server.process)
                urls.append(server.url)
            }
            let started = try await TestNginx.start(upstreams: urls)
            nginx = started
            let servers = BalancedServers(
                url: started.url, tokens: tokens, addresses: urls.map { "\($0.host ?? ""):\($0.port ?? 0)" }, nginx: started,
                tool: tool, database: database, arguments: arguments, folder: folder, processes: processes)
            let result = try await body(servers)
            try await servers.stop()
            try await administer("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            return result
        } catch {
            await nginx?.stop()
            for process in processes { _ = try? await process.kill() }
            try? await administer("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            throw error
        }
    }

    /// Kills process `index` (of 0, 1, 2) with `SIGKILL`, at once, in whatever it was doing, and starts
    /// it again on the same port; returns when it serves again.
    private func killAndRestart(_ index: Int) async throws {
        let status = try await processes[index].kill()
        #expect(status == 128 + SIGKILL, "process \(index) was running when it was killed: \(status)")
        kills += 1
        let port = try #require(URL(string: "http://\(addresses[index])")?.port)
        processes[index] = try await tool.serveAgain(arguments, port: port).process
    }

    /// Kills the next process in turn and starts it again, after the kills asked for before have ended.
    func killNext() async throws {
        let (previous, index) = (lastKill, scheduledKills % processes.count)
        scheduledKills += 1
        let kill = Task {
            _ = await previous?.result
            try await self.killAndRestart(index)
        }
        lastKill = kill
        try await kill.value
    }

    /// Stops every process with `SIGTERM` (each must exit cleanly) and nginx.
    private func stop() async throws {
        for (index, process) in processes.enumerated() {
            let status = try await process.terminate()
            #expect(status == 0, "process \(index) stopped with \(status): \(String(decoding: process.standardError, as: UTF8.self))")
        }
        await nginx.stop()
    }

    /// Runs `body` with a store on the servers' database, as the processes open it.
    func withStore<Result: Sendable>(_ body: (PostgresStore) async throws -> Result) async throws -> Result {
        var configuration = try await testClientConfiguration(maximumConnections: 2)
        configuration.database = database
        let client = PostgresClient(configuration: configuration, backgroundLogger: quietLogger("Anchorage.tests.pool"))
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let store = try await PostgresStore(
                client: client, configuration: PostgresStore.Configuration(logger: quietLogger("Anchorage.PostgresStore")))
            return try await body(store)
        }
    }

    /// Runs `sql` on the test server's maintenance database.
    private static func administer(_ sql: String) async throws {
        try await withTestDatabase(maximumConnections: 1) { database in
            _ = try await database.client.query(PostgresQuery(unsafeSQL: sql))
        }
    }
}
