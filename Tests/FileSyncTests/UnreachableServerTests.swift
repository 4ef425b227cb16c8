import FileSync
import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// `anchorage files sync` when the server cannot be reached or refuses the password: one line, bounded
/// time, and everything pending still there for the next sync.
@Suite("anchorage files sync: an unreachable server")
struct UnreachableFileServerTests {
    @Test("against a closed port, ten pending files end the sync at once with one line; the next sync uploads them all")
    func closedPort() async throws {
        let world = try await World()
        let tool = try AnchorageTool()
        let folder = world.temporary.path("pending")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for number in 1...10 { try Data("file \(number)".utf8).write(to: URL(fileURLWithPath: folder + "/f\(number).txt")) }
        let store = "sqlite:" + world.temporary.path("files.sqlite")
        let environment = ["ANCHORAGE_PASSWORD": world.server.password]
        let (closed, port) = try LoopbackSocket.bind(listening: false)
        defer { close(closed) }

        let started = ContinuousClock.now
        let down = try await tool.run(
            ["files", "sync", folder, "--server", "http://127.0.0.1:\(port)/dav/", "--user", world.server.user, "--store", store,
             "--timeout", "3"],
            environment: environment)
        let took = started.duration(to: .now)
        #expect(down.status == 69)
        #expect(down.errorText == "anchorage: cannot connect to 127.0.0.1:\(port): connection refused\n", "\(down.errorText)")
        // The sync itself ends within RetryPolicy's 20 s (SyncEndpointUnreachableTests holds that to 30 s in
        // process); a loaded machine adds the start of a debug build's process, so the bound here is looser.
        #expect(took < .seconds(90), "took \(took)")

        let up = try await tool.run(
            ["files", "sync", folder, "--server", world.baseURL.absoluteString, "--user", world.server.user, "--store", store],
            environment: environment)
        #expect(up.status == 0, "\(up.errorText)")
        #expect(up.outputText.contains("uploaded 10,"), "\(up.outputText)")
    }

    @Test("a wrong password is one line naming the user")
    func wrongPassword() async throws {
        let world = try await World()
        let tool = try AnchorageTool()
        let folder = world.temporary.path("refused")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let refused = try await tool.run(
            ["files", "sync", folder, "--server", world.baseURL.absoluteString, "--user", world.server.user, "--store", "memory"],
            environment: ["ANCHORAGE_PASSWORD": "not-the-password"])
        #expect(refused.status == 69)
        #expect(refused.errorText == "anchorage: the server refused user \(world.server.user)'s password\n", "\(refused.errorText)")
    }
}
