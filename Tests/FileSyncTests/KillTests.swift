import FileSync
import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// `anchorage files sync` killed with SIGKILL in the middle of uploads and downloads resumes:
/// no partial file on the server or in the folder, nothing lost.
@Suite("FolderSync: a device killed in the middle of transfers resumes")
struct KillTests {
    /// `count` bytes that depend on `name` (so a partial or mixed-up file shows).
    static func content(_ name: String, _ count: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        var state = UInt64(bitPattern: Int64(name.utf8.reduce(7) { $0 &* 31 &+ Int($1) }))
        for index in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return Data(bytes)
    }

    @Test(
        "20 SIGKILLs at random moments of uploads and downloads: the next syncs finish the work, nothing partial",
        // Slow: 20 killed and resumed syncs of the built tool take 10 to 30 seconds in a debug build, so the
        // test runs only when ANCHORAGE_SLOW_TESTS asks for it (scripts/test.sh and CI do).
        .enabled(if: SlowTests.enabled, "slow: 20 SIGKILLs during file syncs (10 to 30 seconds); \(SlowTests.howToRun)"))
    func killedAndResumed() async throws {
        let world = try await World()
        let tool = try AnchorageTool()
        let folder = world.temporary.path("killed")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = "sqlite:" + world.temporary.path("killed.sqlite")
        let arguments = ["files", "sync", folder, "--server", world.baseURL.absoluteString, "--user", world.server.user, "--store", store]
        let environment = ["ANCHORAGE_PASSWORD": world.server.password]
        var generator = SeededGenerator(seed: 99)
        var expected: [String: Data] = [:]
        var kills = 0
        var round = 0
        while kills < 20 {
            round += 1
            // New work both ways: files to upload and files to download.
            for index in 0..<3 {
                let up = "up-\(round)-\(index).bin"
                let data = Self.content(up, (256 << 10) + Int(generator.next() % (512 << 10)))
                try data.write(to: URL(fileURLWithPath: folder + "/" + up))
                expected[up] = data
                let down = "down-\(round)-\(index).bin"
                let remote = Self.content(down, (256 << 10) + Int(generator.next() % (512 << 10)))
                let file = world.temporary.path("staging")
                try remote.write(to: URL(fileURLWithPath: file))
                try await world.direct.upload(from: file, to: down, precondition: .none)
                expected[down] = remote
            }
            let child = try ChildProcess.start(tool.path, arguments: arguments, environment: environment)
            let after = Int(generator.next() % 5)
            // Killed after the after-th file (0: as soon as it starts), while the next one moves.
            let reached: Bool
            do {
                reached = try await child.waitForOutputLine(timeout: .seconds(60)) { line in
                    after == 0 || line.hasPrefix("\(after) files,") ? true : nil
                }
            } catch {
                reached = false
            }
            child.send(SIGKILL)
            _ = try await child.waitForExit()
            if reached { kills += 1 }
        }
        let finish = try await tool.run(arguments, environment: environment)
        #expect(finish.status == 0, "\(finish.errorText)")
        let again = try await tool.run(arguments, environment: environment)
        #expect(again.outputText.contains("uploaded 0, downloaded 0"))

        let local = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(!local.contains { $0.hasSuffix(".anchorage-part") })
        #expect(Set(local) == Set(expected.keys))
        for (name, data) in expected {
            #expect(FileManager.default.contents(atPath: folder + "/" + name) == data, "\(name) differs locally")
        }
        let server = try await world.direct.contents(of: "").filter { !$0.path.isEmpty }
        #expect(Set(server.map(\.path)) == Set(expected.keys))
        for item in server {
            #expect(item.size == Int64(expected[item.path]?.count ?? -1), "\(item.path) differs on the server")
        }
        #expect(kills == 20)
    }
}
