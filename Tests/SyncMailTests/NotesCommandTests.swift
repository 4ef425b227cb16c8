import Foundation
import SyncCore
import SyncHTTPClient
import SyncIMAP
import SyncTesting
import TestSupport
import Testing

@Suite struct NotesCommandTests {
    @Test func addListEditDeleteThroughTheCommandLine() async throws {
        let tool = try AnchorageTool()
        let account = try await TestDovecot.newAccount()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("notes-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let imap = "imap://\(account.user)@127.0.0.1:\(account.port)/Notes"
        let environment = ["ANCHORAGE_IMAP_PASSWORD": account.password]
        let certificate = try await TestDovecot.certificateFile()
        func notes(_ arguments: [String], device: String = "laptop") async throws -> (Int32, String, String) {
            let outcome = try await tool.run(
                ["notes"] + arguments + [
                    "--imap", imap, "--store", "sqlite:\(folder)/\(device).sqlite", "--device", device, "--ca-file", certificate,
                ], environment: environment)
            return (outcome.status, outcome.outputText, outcome.errorText)
        }

        let (added, output, _) = try await notes(["add", "--title", "Shopping", "--body", "eggs"])
        #expect(added == 0)
        let id = try #require(output.split(separator: "\n").first.map(String.init))
        #expect(output.contains("synced: pulled 0, pushed 1"))

        let (_, synced, _) = try await notes(["sync"], device: "phone")
        #expect(synced.contains("pulled 1"))
        let (_, listed, _) = try await notes(["list"], device: "phone")
        #expect(listed.contains("\"title\":\"Shopping\"") && listed.contains(id))

        #expect(try await notes(["edit", id, "--body", "eggs, milk"], device: "phone").0 == 0)
        _ = try await notes(["sync"])
        #expect(try await notes(["list"]).1.contains("eggs, milk"))

        #expect(try await notes(["delete", id]).0 == 0)
        _ = try await notes(["sync"], device: "phone")
        #expect(try await notes(["list"], device: "phone").1.isEmpty)

        let (missing, _, error) = try await notes(["edit", "no-such-note", "--body", "x"])
        #expect(missing == 66 && error.contains("there is no note no-such-note"))
        let bad = try await tool.run(["notes", "list", "--imap", "http://x/Notes", "--store", "memory"], environment: environment)
        #expect(bad.status == 64 && bad.errorText.contains("--imap must be"))
        let noPassword = try await tool.run(["notes", "list", "--imap", imap, "--store", "memory"])
        #expect(noPassword.status == 64 && noPassword.errorText.contains("ANCHORAGE_IMAP_PASSWORD"))
    }

    /// The whole path a user sets up from the command line: `anchorage serve` lets the mail server's
    /// account post (`--push-mail-account`), Dovecot's hook posts there, and `notes sync --watch --push`
    /// on B syncs the note A added, with nobody running a sync on B.
    @Test func aNoteAddedOnAReachesBWatchingThroughServeAndDovecot() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("notes-push-cli")
        let users = folder.path("users.txt")
        for user in ["dovecot", "ada"] {
            let added = try await tool.run(
                ["users", "add", user, "--file", users, "--iterations", "1000"], input: Array("secret\n".utf8))
            try #require(added.status == 0, "users add \(user): \(added.errorText)")
        }
        let server = try await tool.serve(
            ["--store", "sqlite:" + folder.path("server.sqlite"), "--users", users, "--push-mail-account", "dovecot",
             "--log-level", "warning"])
        defer { Task { try? await server.process.terminate() } }
        let account = try await TestDovecot.newAccount(push: server.url.appendingPathComponent("push/mail"))
        let imap = "imap://\(account.user)@127.0.0.1:\(account.port)/Notes"
        let certificate = try await TestDovecot.certificateFile()
        let environment = ["ANCHORAGE_IMAP_PASSWORD": account.password, "ANCHORAGE_PASSWORD": "secret"]
        func location(_ device: String) -> [String] {
            ["--imap", imap, "--store", "sqlite:" + folder.path("\(device).sqlite"), "--device", device, "--ca-file", certificate]
        }

        let watching = try ChildProcess.start(
            tool.path,
            arguments: ["notes", "sync", "--watch", "--push", server.url.absoluteString, "--push-user", "ada"] + location("phone"),
            environment: environment)
        defer { Task { try? await watching.terminate() } }
        _ = try await watching.waitForOutputLine(timeout: .seconds(150)) { $0.contains("watching Notes (push)") ? true : nil }

        let added = try await tool.run(["notes", "add", "--title", "Pushed", "--body", "through Dovecot"] + location("laptop"), environment: environment)
        try #require(added.status == 0, "notes add: \(added.errorText)")
        _ = try await watching.waitForOutputLine(timeout: .seconds(150)) { $0.contains("synced: pulled 1") ? true : nil }
        let listed = try await tool.run(["notes", "list"] + location("phone"), environment: environment)
        #expect(listed.outputText.contains("\"title\":\"Pushed\""), "\(listed.outputText)")

        // Another account of the server may not post mail notifications.
        let refused = try await HTTPClientTransport(baseURL: server.url)
            .with(CredentialsMiddleware(.basic(username: "ada", password: "secret")))
            .send(SyncRequest(method: .post, path: "/push/mail", body: Array("{}".utf8)))
        #expect(refused.status == 403)
    }
}
