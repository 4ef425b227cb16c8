import Foundation
import Logging
import PostgresNIO
import SyncCore
import SyncPostgres
import SyncTesting
import Testing
import TestSupport

/// A hot standby of the test server, started with `scripts/with-postgres.sh --start-replica`; the script's
/// watchdog stops it when this test process ends.
struct TestStandby: Sendable {
    /// The folder of the standby's files.
    let directory: String
    /// The port it listens on, at 127.0.0.1.
    let port: Int

    /// The repository's `scripts/with-postgres.sh`.
    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/with-postgres.sh").path
    }

    /// Why a standby could not be started: thrown, not recorded, since the start runs outside any test
    /// (each test that awaits it records it).
    struct StartFailure: Error, CustomStringConvertible {
        /// What went wrong.
        let description: String
    }

    /// Starts a standby of the test server.
    static func start() async throws -> TestStandby {
        guard let primary = await TestPostgresServer.address else {
            throw StartFailure(description: "no PostgreSQL server is available")
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("anchorage-standby-\(UUID().uuidString)").path
        let owner = String(ProcessInfo.processInfo.processIdentifier)
        let outcome = try await ChildProcess.run(
            "/bin/bash", arguments: [script, "--start-replica", directory, String(primary.port), owner])
        let port = outcome.outputText.split(whereSeparator: \.isNewline).last.flatMap { Int($0) }
        guard outcome.status == 0, let port else {
            _ = try? await ChildProcess.run("/bin/bash", arguments: [script, "--stop", directory])
            throw StartFailure(
                description: "with-postgres.sh --start-replica failed (status \(outcome.status)):\n\(outcome.errorText)")
        }
        return TestStandby(directory: directory, port: port)
    }

    /// Stops the standby at once, as a crash would: its connections drop, and it refuses new ones.
    func crash() async throws {
        let outcome = try await ChildProcess.run("/bin/bash", arguments: [Self.script, "--crash", directory])
        try #require(outcome.status == 0, "with-postgres.sh --crash failed: \(outcome.errorText)")
    }

    /// The pool configuration for the standby.
    func clientConfiguration() async throws -> PostgresClient.Configuration {
        let primary = try #require(await TestPostgresServer.address, "no PostgreSQL server is available")
        var configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: port, username: primary.username, password: nil, database: primary.database, tls: .disable)
        configuration.options.maximumConnections = 4
        configuration.options.additionalStartupParameters = PostgresStore.sessionSettings.map { ($0.name, $0.value) }
        return configuration
    }
}

/// A standby started once for the suite that awaits it, or why it could not be started.
final class SuiteStandby: Sendable {
    private let made = MadeOnce { () -> Result<TestStandby, any Error> in
        do { return .success(try await TestStandby.start()) } catch { return .failure(error) }
    }

    /// The standby, started on first use.
    var standby: TestStandby {
        get async throws { try await made.value.get() }
    }
}

/// Two stores on one fresh schema of the test server: `writer` on the primary alone, as another server
/// process would be, and `reader`, whose reads of changes go to a standby.
struct ReplicaStores: Sendable {
    /// A store with no read replica.
    let writer: PostgresStore
    /// A store that reads changes from the standby.
    let reader: PostgresStore
    /// The standby's pool, for asking it things directly.
    let standby: PostgresClient
    /// The primary's pool.
    let primary: PostgresClient

    /// Returns once the standby answers and has replayed everything the primary has written so far, so that a
    /// read that must come from the standby does not fall back only because a loaded machine kept it behind.
    /// Polls without pausing; gives up after 100,000 answers.
    func waitUntilStandbyCaughtUp() async throws {
        var target = ""
        for try await (position) in try await primary.query("SELECT pg_current_wal_insert_lsn()::text").decode(String.self) {
            target = position
        }
        for _ in 0..<100_000 {
            var reached = false
            let query = PostgresQuery(unsafeSQL: "SELECT coalesce(pg_last_wal_replay_lsn() >= '\(target)'::pg_lsn, false)")
            for try await (answer) in try await standby.query(query).decode(Bool.self) { reached = answer }
            if reached { return }
            await Task.yield()
        }
        throw StandbyBehind(target: target)
    }
}

/// The standby did not replay up to `target` while the test waited.
struct StandbyBehind: Error, CustomStringConvertible {
    let target: String
    var description: String { "the standby did not replay the primary's WAL up to \(target)" }
}

/// Runs `body` with ``ReplicaStores`` on `standby`, whose reader waits at most `wait` for the standby and
/// leaves it alone for `retryDelay` after it failed; drops the schema and shuts the pools down afterwards.
///
/// The primary's pool commits with `synchronous_commit` on (the test server runs with it off), so that a
/// commit reaches the standby at once rather than when PostgreSQL's WAL writer next writes.
func withReplicaStores<Result: Sendable>(
    on standby: TestStandby, wait: Duration, retryDelay: Duration = .zero,
    _ body: (ReplicaStores) async throws -> Result
) async throws -> Result {
    var primaryConfiguration = try await testClientConfiguration(maximumConnections: 4)
    primaryConfiguration.options.additionalStartupParameters.append(("synchronous_commit", "on"))
    let primary = PostgresClient(configuration: primaryConfiguration, backgroundLogger: quietLogger("Anchorage.tests.primary"))
    let replica = PostgresClient(
        configuration: try await standby.clientConfiguration(), backgroundLogger: quietLogger("Anchorage.tests.standby"))
    let schema = TestDatabase.freshSchemaName()
    return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
        group.addTask { await primary.run() }
        group.addTask { await replica.run() }
        defer { group.cancelAll() }
        var configuration = PostgresStore.Configuration(schema: schema, logger: quietLogger("Anchorage.PostgresStore"))
        let writer = try await PostgresStore(client: primary, configuration: configuration)
        configuration.replicaWait = wait
        configuration.replicaRetryDelay = retryDelay
        let reader = try await PostgresStore(client: primary, readReplica: replica, configuration: configuration)
        do {
            let result = try await body(ReplicaStores(writer: writer, reader: reader, standby: replica, primary: primary))
            _ = try? await primary.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"))
            return result
        } catch {
            _ = try? await primary.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"))
            throw error
        }
    }
}
