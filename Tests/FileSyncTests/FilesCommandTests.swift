import FileSync
import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

@Suite("anchorage files sync and conflicts --files")
struct FilesCommandTests {
    @Test("Sync a folder, answer a question from the command line, sync again")
    func syncAndResolve() async throws {
        let world = try await World()
        let tool = try AnchorageTool()
        let folder = world.temporary.path("cli")
        try FileManager.default.createDirectory(atPath: folder + "/docs", withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/docs/a.txt"))
        try await world.put("b.txt", "theirs")
        let store = "sqlite:" + world.temporary.path("files.sqlite")
        let environment = ["ANCHORAGE_PASSWORD": world.server.password]
        let arguments = ["files", "sync", folder, "--server", world.baseURL.absoluteString, "--user", world.server.user, "--store", store]

        let first = try await tool.run(arguments, environment: environment)
        #expect(first.status == 0, "\(first.errorText)")
        #expect(first.outputText.contains("uploaded 1, downloaded 1"))
        #expect(first.outputText.contains("files, ") && first.outputText.contains("docs/a.txt"))  // plain progress lines
        #expect(try await world.get("docs/a.txt") == "mine")
        #expect(try String(contentsOfFile: folder + "/b.txt", encoding: .utf8) == "theirs")

        try Data("edited here".utf8).write(to: URL(fileURLWithPath: folder + "/b.txt"))
        try await world.put("b.txt", "edited there")
        let second = try await tool.run(arguments, environment: environment)
        #expect(second.status == 0 && second.outputText.contains("1 question waits for an answer"))

        let list = try await tool.run(["conflicts", "list", "--files", "--store", store])
        #expect(list.status == 0 && list.outputText.contains("\"id\":\"files/b.txt\"") && list.outputText.contains("changed-on-both"))
        let resolve = try await tool.run(["conflicts", "resolve", "files/b.txt", "--keep", "theirs", "--files", "--store", store])
        #expect(resolve.status == 0, "\(resolve.errorText)")
        let third = try await tool.run(arguments, environment: environment)
        #expect(third.status == 0)
        #expect(try String(contentsOfFile: folder + "/b.txt", encoding: .utf8) == "edited there")
    }

    @Test("Bad arguments and an unreachable server are one line each")
    func badInput() async throws {
        let tool = try AnchorageTool()
        let world = try await World()
        let folder = world.temporary.path("x")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let badURL = try await tool.run(["files", "sync", folder, "--server", "ftp://x", "--store", "memory"])
        #expect(badURL.status == 64 && badURL.errorText.split(separator: "\n").count == 1)
        let noFolder = try await tool.run(["files", "sync", folder + "/missing", "--server", "http://127.0.0.1:1/", "--store", "memory"])
        #expect(noFolder.status == 64)
        let down = try await tool.run(["files", "sync", folder, "--server", "http://127.0.0.1:1/dav/", "--store", "memory", "--timeout", "1"])
        #expect(down.status == 69 && down.errorText.split(separator: "\n").count == 1)
    }
}
