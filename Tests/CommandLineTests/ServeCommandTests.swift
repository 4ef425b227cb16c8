import Foundation
import SyncCore
import SyncHTTPClient
import SyncTesting
import TestSupport
import Testing

/// `anchorage serve` the way a new user first runs it.
@Suite("anchorage serve")
struct ServeCommandTests {
    @Test("in an empty folder it serves, refuses every request, and takes an account added while it runs")
    func firstRunInAnEmptyFolder() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("serve-first-run")
        let served = try await tool.serve(["--log-level", "warning"], workingDirectory: folder.path)
        let (server, address) = (served.process, served.url)
        let hint = String(decoding: server.standardError, as: UTF8.self)
        #expect(
            hint.split(separator: "\n").count == 1 && hint.contains("echo PASSWORD | anchorage users add NAME --file users.txt"),
            "one line saying how to add an account: \(hint)")
        #expect(!hint.contains("Error Domain="))

        let transport = HTTPClientTransport(baseURL: address)
        let ada = Credentials.basic(username: "ada", password: "first-run")
        let device = UUID().uuidString.lowercased()
        func status(_ credentials: Credentials?) async throws -> Int {
            try await transport.send(
                SyncRequest(method: .get, path: "/deltas/from:0?deviceToken=\(device)", credentials: credentials)
            ).status
        }
        #expect(try await status(nil) == 401)
        #expect(try await status(ada) == 401)

        // Another process adds the account; the running server takes it without a restart.
        let added = try await tool.run(
            ["users", "add", "ada", "--iterations", "1000"], input: Array("first-run\n".utf8), workingDirectory: folder.path)
        try #require(added.status == 0, "anchorage users add: \(added.errorText)")
        let afterAdding = try await status(ada)
        #expect((200..<300).contains(afterAdding), "signed in after the account was added: \(afterAdding)")
        #expect(try await status(.basic(username: "ada", password: "wrong")) == 401)

        // And a removal is followed too.
        let removed = try await tool.run(["users", "remove", "ada"], workingDirectory: folder.path)
        try #require(removed.status == 0, "anchorage users remove: \(removed.errorText)")
        #expect(try await status(ada) == 401)

        #expect(try await server.terminate() == 0, "the server stopped cleanly on SIGTERM")
    }

    @Test("a users file that cannot be read is one line naming the file, exit status 66")
    func unreadableUsersFile() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("serve-bad-users")
        try Data("ada:nonsense\n".utf8).write(to: URL(fileURLWithPath: folder.path("users.txt")))

        let outcome = try await tool.run(["serve", "--port", "0", "--store", "memory"], workingDirectory: folder.path)
        #expect(outcome.status == 66)
        let lines = outcome.errorText.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("anchorage: ") && lines[0].contains("users.txt line 1"), "\(outcome.errorText)")
    }

    @Test("--postgres-connections below 2 is refused before anything starts, exit status 64")
    func tooFewPostgresConnections() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("serve-postgres-connections")
        let outcome = try await tool.run(
            ["serve", "--port", "0", "--store", "postgres://nobody@127.0.0.1:1/none", "--postgres-connections", "1"],
            workingDirectory: folder.path)
        #expect(outcome.status == 64)
        #expect(outcome.errorText.contains("--postgres-connections must be at least 2"), "\(outcome.errorText)")
    }
}
