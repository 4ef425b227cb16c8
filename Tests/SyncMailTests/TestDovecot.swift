import Foundation
import SyncIMAP
import SyncTesting
import TestSupport

/// The Dovecot the mail tests use: the one named by the environment of `scripts/with-dovecot.sh`,
/// or else one this test process starts with that script on first use and stops when it exits.
/// Each test logs in as a user of its own, so tests never see each other's mailboxes.
enum TestDovecot {
    struct Server: Sendable {
        var port: Int
        var directory: String
    }

    /// The server, or the reason none could be started (a failure, never a skip).
    static var server: Result<Server, TestDovecotError> {
        get async { await started.value }
    }

    /// The server, found or started on first use: callers that come while it starts wait for it
    /// without holding a thread.
    private static let started = MadeOnce { await findOrStart() }

    nonisolated(unsafe) private static var ownedDirectory: String?

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/with-dovecot.sh").path
    }

    private static func findOrStart() async -> Result<Server, TestDovecotError> {
        let environment = ProcessInfo.processInfo.environment
        if let port = environment["ANCHORAGE_IMAP_PORT"].flatMap(Int.init), let directory = environment["ANCHORAGE_DOVECOT_DIR"] {
            return .success(Server(port: port, directory: directory))
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anchorage-dovecot-\(UUID().uuidString)").path
        let outcome: ChildProcess.Outcome
        do {
            outcome = try await ChildProcess.run(
                "/bin/bash", arguments: [script, "--start", directory, String(ProcessInfo.processInfo.processIdentifier)])
        } catch {
            return .failure(TestDovecotError(reason: "could not run \(script): \(error)"))
        }
        guard outcome.status == 0, let line = outcome.outputText.split(whereSeparator: \.isNewline).last, let port = Int(line) else {
            return .failure(TestDovecotError(reason: "\(script) --start failed: \(outcome.errorText)"))
        }
        ownedDirectory = directory
        atexit {
            if let directory = TestDovecot.ownedDirectory {
                _ = try? ChildProcess.runSynchronously("/bin/bash", arguments: [TestDovecot.script, "--stop", directory])
            }
        }
        return .success(Server(port: port, directory: directory))
    }

    /// The server's self-signed certificate (for STARTTLS), to trust.
    static func certificateFile() async throws -> String {
        let found = try await Self.server.get()
        return found.directory + "/tls/cert.pem"
    }

    /// A new IMAP user (password `secret`), whose changes the push hook posts to `push` (a push
    /// server's `/push/mail`) as the push server's account `dovecot`.
    static func newAccount(push: URL? = nil, prefix: String = "u") async throws -> IMAPAccount {
        let server = try await server.get()
        let user = prefix + UUID().uuidString.prefix(8).lowercased()
        var line = "\(user):{PLAIN}secret::::::"
        if let push {
            line += "userdb_push_lua_url=\(push.absoluteString) userdb_push_lua_user=dovecot userdb_push_lua_password=secret"
        }
        // A file of the user's own (see scripts/with-dovecot.sh), written whole and renamed into place.
        try Data((line + "\n").utf8).write(
            to: URL(fileURLWithPath: server.directory + "/users.d/" + user), options: .atomic)
        return IMAPAccount(host: "127.0.0.1", port: server.port, user: user, password: "secret", security: .none)
    }
}

struct TestDovecotError: Error, CustomStringConvertible {
    var reason: String
    var description: String { "Dovecot is needed (scripts/install-deps.sh --dovecot): \(reason)" }
}
