import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// `anchorage sync` when the server cannot be reached or refuses the password: one plain line, in
/// bounded time, and the changes waiting to go up still waiting.
@Suite("anchorage sync: an unreachable server")
struct UnreachableServerTests {
    enum Stack: String, CaseIterable, CustomTestStringConvertible {
        case aquasync, appsync, ota
        var testDescription: String { rawValue }
        /// `records save` arguments of one record of the stack.
        var save: [String] {
            switch self {
            case .aquasync: ["records", "save", "Contact", "name=Ada"]
            case .appsync: ["records", "save", "--stack", "appsync", "booking", "pk=1", "guest=Ada"]
            case .ota: ["records", "save", "--stack", "ota", "--user", "ada", "com.apple.contacts.Contact", "name=Ada"]
            }
        }
        var list: [String] {
            switch self {
            case .aquasync: ["records", "list", "Contact"]
            case .appsync: ["records", "list", "--stack", "appsync", "booking"]
            case .ota: ["records", "list", "--stack", "ota", "--user", "ada"]
            }
        }
    }

    @Test("against a closed port a sync ends at once with one line, and its pending change is sent by the next", arguments: Stack.allCases)
    func closedPort(_ stack: Stack) async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("sync-unreachable")
        let store = ["--store", "sqlite:" + folder.path("device.sqlite")]
        let saved = try await tool.run(stack.save + store)
        try #require(saved.status == 0, "\(saved.errorText)")
        let (closed, port) = try LoopbackSocket.bind(listening: false)
        defer { close(closed) }

        let started = ContinuousClock.now
        let down = try await tool.run(
            ["sync", "--stack", stack.rawValue, "--server", "http://127.0.0.1:\(port)", "--user", "ada"] + store,
            environment: ["ANCHORAGE_PASSWORD": "secret"])
        let took = started.duration(to: .now)
        #expect(down.status == 69)
        #expect(down.errorText == "anchorage: cannot connect to 127.0.0.1:\(port): connection refused\n", "\(down.errorText)")
        // The sync itself ends within RetryPolicy's 20 s (SyncEndpointUnreachableTests holds that to 30 s in
        // process); a loaded machine adds the start of a debug build's process, so the bound here is looser.
        #expect(took < .seconds(90), "took \(took)")
        #expect(try await tool.run(stack.list + store).outputText.contains("Ada"), "the record is still on the device")

        // A server, then: the pending change goes up, and a second device receives it.
        let users = folder.path("users.txt")
        _ = try await tool.run(["users", "add", "ada", "--iterations", "1000", "--file", users], input: Array("secret\n".utf8))
        let server = try await tool.serve(["--store", "memory", "--users", users, "--log-level", "warning"])
        let up = try await tool.run(
            ["sync", "--stack", stack.rawValue, "--server", server.url.absoluteString, "--user", "ada"] + store,
            environment: ["ANCHORAGE_PASSWORD": "secret"])
        #expect(up.status == 0, "\(up.errorText)")
        let other = ["--store", "sqlite:" + folder.path("other.sqlite")]
        let pulled = try await tool.run(
            ["sync", "--stack", stack.rawValue, "--server", server.url.absoluteString, "--user", "ada"] + other,
            environment: ["ANCHORAGE_PASSWORD": "secret"])
        #expect(pulled.status == 0, "\(pulled.errorText)")
        #expect(try await tool.run(stack.list + other).outputText.contains("Ada"), "the second device has the record")

        // A wrong password is a line naming the user.
        let refused = try await tool.run(
            ["sync", "--stack", stack.rawValue, "--server", server.url.absoluteString, "--user", "ada"] + other,
            environment: ["ANCHORAGE_PASSWORD": "wrong"])
        #expect(refused.status == 69)
        #expect(refused.errorText == "anchorage: the server refused user ada's password\n", "\(refused.errorText)")
        _ = try await server.process.terminate()
    }
}
