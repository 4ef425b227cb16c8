import Foundation
import SyncCore
import SyncHTTPClient
import SyncTesting
import TestSupport
import Testing

/// `anchorage serve --login-failures`, through the built tool.
@Suite("anchorage serve: failed logins")
struct LoginLimitCommandTests {
    @Test("--login-failures 3 locks an account after three wrong passwords with 429 and Retry-After; another account signs in")
    func loginFailures() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("serve-login-failures")
        for name in ["ada", "bob"] {
            let added = try await tool.run(
                ["users", "add", name, "--iterations", "1000"], input: Array("\(name)-password\n".utf8),
                workingDirectory: folder.path)
            try #require(added.status == 0, "\(added.errorText)")
        }
        let server = try await tool.serve(
            ["--store", "memory", "--log-level", "error", "--login-failures", "3", "--login-failures-per-address", "0"],
            workingDirectory: folder.path)
        let transport = HTTPClientTransport(baseURL: server.url)
        let device = UUID().uuidString.lowercased()
        func send(_ name: String, _ password: String) async throws -> SyncResponse {
            try await transport.send(
                SyncRequest(
                    method: .get, path: "/deltas/from:0?deviceToken=\(device)",
                    credentials: .basic(username: name, password: password)))
        }
        var statuses: [Int] = []
        for _ in 0..<5 { statuses.append(try await send("ada", "wrong").status) }
        #expect(statuses == [401, 401, 401, 429, 429])
        let locked = try await send("ada", "ada-password")
        #expect(locked.status == 429)
        #expect(locked.retryAfter.map { $0 > .zero && $0 <= .seconds(60) } == true, "\(String(describing: locked.retryAfter))")
        #expect((200..<300).contains(try await send("bob", "bob-password").status), "bob is not locked")
        #expect(try await server.process.terminate() == 0)

        let refused = try await tool.run(["serve", "--login-failures=-1"], workingDirectory: folder.path)
        #expect(refused.status == 64)
        #expect(refused.errorText.contains("must not be negative"), "\(refused.errorText)")
    }
}
