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
    public static let address: Address? = findOrStart()

    /// Whether a server is available.
    public static var isAvailable: Bool { address != nil }

    /// The directory of the server this process started, if it did.
    nonisolated(unsafe) private static var ownedDirectory: String?

    /// The repository's `scripts/with-postgres.sh`.
    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/with-postgres.sh").path
    }

    private static func findOrStart() -> Address? {
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
        return start()
    }

    /// Starts a server in a fresh temporary directory; the script's watchdog
    /// stops it if this process dies without stopping it.
    private static func start() -> Address? {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            report("\(script) is missing")
            return nil
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("anchorage-postgres-\(UUID().uuidString)").path
        let result: (status: Int32, output: String, errors: String)
        do {
            result = try run([script, "--start", directory, String(ProcessInfo.processInfo.processIdentifier)])
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

    /// Stops the server this process started, if any.
    private static func stopOwnedServer() {
        guard let directory = ownedDirectory else { return }
        ownedDirectory = nil
        _ = try? run([script, "--stop", directory])
    }

    /// Runs `arguments` with bash and returns its status and output.
    private static func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        // Runs once, from the static initializer of `address` or at exit: nowhere to await.
        let outcome = try ChildProcess.runSynchronously("/bin/bash", arguments: arguments)
        return (outcome.status, outcome.outputText, outcome.errorText)
    }

    private static func report(_ reason: String) {
        FileHandle.standardError.write(Data("PostgreSQL tests skipped: \(reason)\n".utf8))
    }
}
