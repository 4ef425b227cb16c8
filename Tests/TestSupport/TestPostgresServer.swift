import Foundation
import SyncTesting

/// The PostgreSQL server the tests use: the one named by the environment of
/// `scripts/with-postgres.sh`, or else a throwaway server this test process
/// starts with that script on first use and stops when it exits.
///
/// When no server can be had, ``address`` is `nil`, the reason is printed on
/// standard error, and the PostgreSQL tests are skipped.
public enum TestPostgresServer {
    /// Where a server listens.
    public struct Address: Sendable {
        /// The host name or address.
        public var host: String
        /// The port.
        public var port: Int
        /// The user to connect as (trust authentication: no password).
        public var username: String
        /// The database to connect to.
        public var database: String
    }

    /// The server's address, or `nil` when none could be started.
    public static var address: Address? {
        get async { await server.value }
    }

    /// Whether a server is available.
    public static var isAvailable: Bool {
        get async { await address != nil }
    }

    /// The server, found or started on first use: callers that come while it starts wait for it
    /// without holding a thread.
    private static let server = MadeOnce { await findOrStart() }

    /// The directory of the server this process started, if it did.
    nonisolated(unsafe) private static var ownedDirectory: String?

    /// The repository's `scripts/with-postgres.sh`.
    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/with-postgres.sh").path
    }

    private static func findOrStart() async -> Address? {
        let environment = ProcessInfo.processInfo.environment
        if let portText = environment["ANCHORAGE_POSTGRES_PORT"] {
            guard let port = Int(portText) else {
                report("ANCHORAGE_POSTGRES_PORT is not a port number: \(portText)")
                return nil
            }
            return Address(
                host: environment["ANCHORAGE_POSTGRES_HOST"] ?? "127.0.0.1", port: port,
                username: environment["ANCHORAGE_POSTGRES_USER"] ?? "anchorage",
                database: environment["ANCHORAGE_POSTGRES_DATABASE"] ?? "postgres")
        }
        return await start()
    }

    /// Starts a server in a fresh temporary directory; the script's watchdog
    /// stops it if this process dies without stopping it.
    private static func start() async -> Address? {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            report("\(script) is missing")
            return nil
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("anchorage-postgres-\(UUID().uuidString)").path
        let result: (status: Int32, output: String, errors: String)
        do {
            let outcome = try await ChildProcess.run(
                "/bin/bash", arguments: [script, "--start", directory, String(ProcessInfo.processInfo.processIdentifier)])
            result = (outcome.status, outcome.outputText, outcome.errorText)
        } catch {
            report("could not run \(script): \(error)")
            return nil
        }
        guard result.status == 0,
            let portLine = result.output.split(whereSeparator: \.isNewline).last, let port = Int(portLine)
        else {
            report("\(script) --start failed (status \(result.status)):\n\(result.errors)")
            return nil
        }
        ownedDirectory = directory
        atexit { TestPostgresServer.stopOwnedServer() }
        return Address(host: "127.0.0.1", port: port, username: "anchorage", database: "postgres")
    }

    /// Stops the server this process started, if any: at exit, where there is nothing to await.
    private static func stopOwnedServer() {
        guard let directory = ownedDirectory else { return }
        ownedDirectory = nil
        _ = try? ChildProcess.runSynchronously("/bin/bash", arguments: [script, "--stop", directory])
    }

    private static func report(_ reason: String) {
        FileHandle.standardError.write(Data("PostgreSQL tests skipped: \(reason)\n".utf8))
    }
}
