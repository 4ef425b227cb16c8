import Foundation
import SyncTesting
import TestSupport
import Testing

/// `anchorage serve` with the push server and `anchorage sync --watch`, as a user runs them.
@Suite("Push from the command line")
struct PushCommandLineTests {
    @Test("an edit on the phone reaches the watching laptop without anyone running sync on it")
    func watchSyncsOnNotification() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("push-cli")
        let users = folder.path("users.txt")
        let added = try await tool.run(["users", "add", "ada", "--file", users], input: Array("secret\n".utf8))
        #expect(added.status == 0, "\(added.errorText)")
        let server = try await tool.serve(["--store", "sqlite:" + folder.path("server.sqlite"), "--users", users])
        let environment = ["ANCHORAGE_PASSWORD": "secret"]
        let phone = ["--store", "sqlite:" + folder.path("phone.sqlite")]
        let laptop = ["--store", "sqlite:" + folder.path("laptop.sqlite")]

        let watcher = try ChildProcess.start(
            tool.path, arguments: ["sync", "--watch", "--server", server.url.absoluteString, "--user", "ada"] + laptop,
            environment: environment)
        // It syncs everything once on connecting.
        _ = try await watcher.waitForOutputLine { $0.hasPrefix("aquasync/Contact: synced") ? true : nil }
        let before = String(decoding: watcher.standardOutput, as: UTF8.self).split(separator: "\n").count

        let saved = try await tool.run(["records", "save", "Contact", "name=Ada"] + phone)
        #expect(saved.status == 0, "\(saved.errorText)")
        let synced = try await tool.run(["sync", "--server", server.url.absoluteString, "--user", "ada"] + phone, environment: environment)
        #expect(synced.status == 0, "\(synced.errorText)")

        let line = try await watcher.waitForOutputLine { line in
            line.hasPrefix("aquasync/Contact: synced") && line.contains("pulled 1") ? String(line) : nil
        }
        #expect(line.contains("pulled 1"))
        let lines = String(decoding: watcher.standardOutput, as: UTF8.self).split(separator: "\n")
        #expect(lines.count > before)
        _ = try await watcher.terminate()

        let listed = try await tool.run(["records", "list", "Contact"] + laptop)
        #expect(listed.outputText.contains("\"name\":\"Ada\""), "\(listed.outputText)")
        #expect(try await server.process.terminate() == 0, "\(String(decoding: server.process.standardError, as: UTF8.self))")
    }
}
