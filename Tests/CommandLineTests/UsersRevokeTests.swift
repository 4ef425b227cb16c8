import Foundation
import SyncCore
import SyncHTTPClient
import SyncTesting
import TestSupport
import Testing

/// `anchorage users revoke`, against a running `anchorage serve`.
@Suite("anchorage users revoke")
struct UsersRevokeTests {
    @Test("revoking an account's tokens stops them at once on a running server; its password still works")
    func revokeStopsTokens() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("users-revoke")
        func run(_ arguments: [String], input: String = "") async throws -> ChildProcess.Outcome {
            try await tool.run(arguments, input: Array(input.utf8), workingDirectory: folder.path)
        }
        try #require(try await run(["users", "add", "ada", "--iterations", "1000"], input: "ada-password\n").status == 0)
        try #require(try await run(["users", "add", "ada", "--token", "ada-token-1"]).status == 0)
        try #require(try await run(["users", "add", "ada", "--token", "ada-token-2"]).status == 0)
        try #require(try await run(["users", "add", "bob", "--token", "bob-token"]).status == 0)
        let server = try await tool.serve(["--store", "memory", "--log-level", "error"], workingDirectory: folder.path)

        let transport = HTTPClientTransport(baseURL: server.url)
        let device = UUID().uuidString.lowercased()
        func status(_ credentials: Credentials) async throws -> Int {
            try await transport.send(
                SyncRequest(method: .get, path: "/deltas/from:0?deviceToken=\(device)", credentials: credentials)
            ).status
        }
        #expect((200..<300).contains(try await status(.bearer("ada-token-1"))))

        let revoked = try await run(["users", "revoke", "ada"])
        #expect(revoked.status == 0, "\(revoked.errorText)")
        #expect(revoked.outputText == "ada: 2 tokens revoked in users.txt\n", "\(revoked.outputText)")

        #expect(try await status(.bearer("ada-token-1")) == 401, "a revoked token is refused at once")
        #expect(try await status(.bearer("ada-token-2")) == 401)
        #expect((200..<300).contains(try await status(.basic(username: "ada", password: "ada-password"))), "the password stays")
        #expect((200..<300).contains(try await status(.bearer("bob-token"))), "another account's token stays")
        let listed = try await run(["users", "list"])
        #expect(listed.outputText == "ada\nbob\n")

        let unknown = try await run(["users", "revoke", "cy"])
        #expect(unknown.status == 67)
        #expect(unknown.errorText == "anchorage: cy is not in users.txt\n", "\(unknown.errorText)")
        #expect(try await server.process.terminate() == 0)
    }
}
