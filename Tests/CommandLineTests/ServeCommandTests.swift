import Foundation
import SyncCore
import SyncHTTP
import SyncTesting
import Testing

/// The `anchorage` executable, built beside the test bundle.
private let anchorage = ChildProcess.builtExecutable(named: "anchorage")

/// `anchorage serve` the way a new user first runs it.
@Suite("anchorage serve")
struct ServeCommandTests {
    @Test("in an empty folder it serves, refuses every request, and takes an account added while it runs")
    func firstRunInAnEmptyFolder() async throws {
        // Not skipped when missing: `swift build --build-tests` builds the tool.
        let tool = try #require(anchorage, "the anchorage executable was not found beside the test bundle")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-first-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let server = try ChildProcess.start(
            tool, arguments: ["serve", "--port", "0", "--log-level", "warning"], workingDirectory: folder.path)
        defer { _ = try? server.terminate() }
        let address = try await server.waitForOutputLine(timeout: .seconds(300)) { line in
            line.split(separator: " ").first { $0.hasPrefix("http://") }.flatMap { URL(string: String($0)) }
        }
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
        let added = try ChildProcess.run(
            tool, arguments: ["users", "add", "ada", "--iterations", "1000"], input: Array("first-run\n".utf8),
            workingDirectory: folder.path)
        try #require(added.status == 0, "anchorage users add: \(added.errorText)")
        let afterAdding = try await status(ada)
        #expect((200..<300).contains(afterAdding), "signed in after the account was added: \(afterAdding)")
        #expect(try await status(.basic(username: "ada", password: "wrong")) == 401)

        // And a removal is followed too.
        let removed = try ChildProcess.run(tool, arguments: ["users", "remove", "ada"], workingDirectory: folder.path)
        try #require(removed.status == 0, "anchorage users remove: \(removed.errorText)")
        #expect(try await status(ada) == 401)

        #expect(try server.terminate() == 0, "the server stopped cleanly on SIGTERM")
    }

    @Test("a users file that cannot be read is one line naming the file, exit status 66")
    func unreadableUsersFile() throws {
        let tool = try #require(anchorage, "the anchorage executable was not found beside the test bundle")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-bad-users-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("ada:nonsense\n".utf8).write(to: folder.appendingPathComponent("users.txt"))

        let outcome = try ChildProcess.run(
            tool, arguments: ["serve", "--port", "0", "--store", "memory"], workingDirectory: folder.path)
        #expect(outcome.status == 66)
        let lines = outcome.errorText.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("anchorage: ") && lines[0].contains("users.txt line 1"), "\(outcome.errorText)")
    }
}
