import Foundation
import SyncCore
import SyncIMAP
import SyncTesting
import TestSupport
import Testing

/// `anchorage notes` while the IMAP server cannot be reached: every change is saved on the device
/// first, the failed sync says so, and the next sync sends it (journal rule 1).
@Suite struct NotesOfflineTests {
    /// A TCP relay to Dovecot that the test stops and starts, so that the server goes away at the
    /// address the device knows it by: scripts/tcp-relay.py.
    static var relay: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/tcp-relay.py").path
    }

    static func startRelay(port: Int, to target: Int) async throws -> ChildProcess.Running {
        try await LoopbackSocket.retryingWhilePortTaken {
            let relay = try ChildProcess.start("python3", arguments: [Self.relay, String(port), String(target)])
            do {
                _ = try await relay.waitForOutputLine(timeout: .seconds(30)) { $0.contains("relaying") ? true : nil }
            } catch {
                _ = try? await relay.kill()
                throw ChildProcess.LaunchError(description: "the relay did not start: \(String(decoding: relay.standardError, as: UTF8.self))")
            }
            return relay
        }
    }

    @Test func editsAndDeletesMadeWhileTheServerIsAwayAreKeptAndSentLater() async throws {
        let tool = try AnchorageTool()
        let account = try await TestDovecot.newAccount()
        let folder = try TemporaryFolder("notes-offline")
        let port = try LoopbackSocket.restartablePort()
        var relay = try await Self.startRelay(port: port, to: account.port)
        let environment = ["ANCHORAGE_IMAP_PASSWORD": account.password]
        let certificate = try await TestDovecot.certificateFile()
        func notes(_ arguments: [String], device: String) async throws -> ChildProcess.Outcome {
            try await tool.run(
                ["notes"] + arguments + [
                    "--imap", "imap://\(account.user)@127.0.0.1:\(port)/Notes", "--store", "sqlite:" + folder.path("\(device).sqlite"),
                    "--device", device, "--ca-file", certificate,
                ], environment: environment)
        }

        let first = try await notes(["add", "--title", "Shopping", "--body", "eggs"], device: "laptop")
        try #require(first.status == 0, "\(first.errorText)")
        let shopping = try #require(first.outputText.split(separator: "\n").first.map(String.init))
        let second = try await notes(["add", "--title", "Old", "--body", "to go"], device: "laptop")
        let old = try #require(second.outputText.split(separator: "\n").first.map(String.init))
        #expect(try await notes(["sync"], device: "phone").status == 0)

        // The server goes away.
        _ = try await relay.kill()
        let away = "cannot connect to 127.0.0.1:\(port): connection refused"

        let edited = try await notes(["edit", shopping, "--body", "eggs, milk"], device: "laptop")
        #expect(edited.status == 69)
        #expect(edited.errorText == "anchorage: the edit of note \(shopping) is saved here and waits for the next sync: \(away)\n", "\(edited.errorText)")
        #expect(try await notes(["list"], device: "laptop").outputText.contains("eggs, milk"))

        let deleted = try await notes(["delete", old], device: "laptop")
        #expect(deleted.status == 69)
        #expect(deleted.errorText.contains("the deletion of note \(old) is saved here and waits for the next sync"))
        #expect(try await notes(["list"], device: "laptop").outputText.contains(old) == false)

        let added = try await notes(["add", "--title", "Offline"], device: "laptop")
        #expect(added.status == 69)
        let offline = try #require(added.outputText.split(separator: "\n").first.map(String.init), "the id is printed")
        #expect(added.errorText.contains("note \(offline) is saved here and waits for the next sync"))

        // The phone edits the same note later, also while the server is away: the newer edit is the one that stays.
        let phoneEdit = try await notes(["edit", shopping, "--body", "eggs, milk, bread"], device: "phone")
        #expect(phoneEdit.status == 69)

        // The server is back: the waiting changes go up, and both devices end with the newest edit.
        relay = try await Self.startRelay(port: port, to: account.port)
        #expect(try await notes(["sync"], device: "laptop").status == 0)
        #expect(try await notes(["sync"], device: "phone").status == 0)
        #expect(try await notes(["sync"], device: "laptop").status == 0)
        for device in ["laptop", "phone"] {
            let listed = try await notes(["list"], device: device).outputText
            #expect(listed.contains("eggs, milk, bread"), "\(device): \(listed)")
            #expect(!listed.contains(old), "\(device): the deleted note is gone")
            #expect(listed.contains(offline), "\(device): the note added offline arrived")
        }
        _ = try await relay.kill()
    }
}
