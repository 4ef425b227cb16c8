import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// The `anchorage` executable, built beside the test bundle.
private let anchorage = ChildProcess.builtExecutable(named: "anchorage")

/// `anchorage serve`, `sync --stack ota` and `records --stack ota`, run as
/// separate processes on SQLite stores, the way a user would.
@Suite("anchorage with --stack ota")
struct OTACommandLineTests {
    /// A contact as `anchorage records list --stack ota` prints it.
    struct Listed: Equatable {
        var luid: String
        var entity: String
        var fields: [String: SyncValue]
    }

    static let contact = "com.apple.contacts.Contact"
    static let password = "ota-cli-password"

    @Test("a contact saved on device A reaches device B through /ota, and B's edit comes back to A")
    func contactTravelsBothWays() async throws {
        // Not skipped when missing: `swift build --build-tests` builds the tool, and a
        // test that quietly skips would hide a broken build.
        let tool = try #require(anchorage, "the anchorage executable was not found beside the test bundle")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ota-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let users = folder.appendingPathComponent("users.txt").path
        let deviceA = ["--store", "sqlite:" + folder.appendingPathComponent("a.sqlite").path]
        let deviceB = ["--store", "sqlite:" + folder.appendingPathComponent("b.sqlite").path]

        let added = try await ChildProcess.run(tool, arguments: ["users", "add", "ada", "--file", users], input: Array("\(Self.password)\n".utf8))
        try #require(added.status == 0, "anchorage users add failed: \(added.errorText)")

        let server = try ChildProcess.start(
            tool,
            arguments: [
                "serve", "--port", "0", "--store", "sqlite:" + folder.appendingPathComponent("server.sqlite").path, "--users", users,
                "--log-level", "warning",
            ])
        let banner = try await server.waitForOutputLine(timeout: .seconds(300)) { $0.contains("serving on") ? String($0) : nil }
        #expect(banner.contains("OTA at /ota"), "\(banner)")
        let url = try #require(banner.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init), "\(banner)")

        /// Runs `anchorage` and requires it to succeed; returns what it printed.
        func succeed(_ arguments: [String]) async throws -> String {
            let outcome = try await ChildProcess.run(tool, arguments: arguments, environment: ["ANCHORAGE_PASSWORD": Self.password])
            try #require(
                outcome.status == 0,
                "anchorage \(arguments.joined(separator: " ")) exited with \(outcome.status): \(outcome.errorText)")
            return outcome.outputText
        }
        func sync(_ device: [String], codec: String, user: [String] = []) async throws -> String {
            try await succeed(["sync", "--stack", "ota", "--server", url, "--codec", codec] + user + device)
        }

        // Device A saves a contact (naming the account, which the store keeps) and syncs in XML plists.
        let luidA = try await succeed(
            ["records", "save", "--stack", "ota", "--user", "ada", Self.contact, "first name=Ada", "last name=Lovelace", "born=1815"]
                + deviceA
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!luidA.isEmpty)
        let firstSyncA = try await sync(deviceA, codec: "xml-plist")
        #expect(firstSyncA.contains("sent 1,"), "\(firstSyncA)")
        #expect(firstSyncA.contains("com.apple.Contacts slow"), "\(firstSyncA)")

        // Device B, empty, syncs in binary plists and gets the contact under its own LUID.
        let firstSyncB = try await sync(deviceB, codec: "binary-plist", user: ["--user", "ada"])
        #expect(firstSyncB.contains("received 1;"), "\(firstSyncB)")
        let onB = try Self.listed(try await succeed(["records", "list", "--stack", "ota"] + deviceB))
        try #require(onB.count == 1, "\(onB)")
        #expect(onB[0].entity == Self.contact)
        #expect(onB[0].fields == ["first name": "Ada", "last name": "Lovelace", "born": 1815])

        // B edits the contact (its store remembers the account) and syncs in MessagePack; A syncs again.
        let edited: [String: SyncValue] = ["first name": "Ada", "last name": "King", "born": 1815, "title": "Countess of Lovelace"]
        let replaced = try await succeed(
            ["records", "save", "--stack", "ota", "--luid", onB[0].luid, Self.contact, "first name=Ada", "last name=King", "born=1815",
             "title=Countess of Lovelace"] + deviceB)
        #expect(replaced.trimmingCharacters(in: .whitespacesAndNewlines) == onB[0].luid)
        let secondSyncB = try await sync(deviceB, codec: "msgpack")
        #expect(secondSyncB.contains("sent 1,"), "\(secondSyncB)")
        let secondSyncA = try await sync(deviceA, codec: "xml-plist")
        #expect(secondSyncA.contains("received 1;"), "\(secondSyncA)")
        #expect(secondSyncA.contains("com.apple.Contacts fast"), "\(secondSyncA)")

        let onA = try Self.listed(try await succeed(["records", "list", "--stack", "ota"] + deviceA))
        #expect(onA == [Listed(luid: luidA, entity: Self.contact, fields: edited)])

        // Each store presents one device id to the server, the same on every sync.
        let idA = Self.deviceID(firstSyncA)
        #expect(idA != nil && idA == Self.deviceID(secondSyncA), "\(firstSyncA)\(secondSyncA)")
        #expect(Self.deviceID(firstSyncB) == Self.deviceID(secondSyncB))
        #expect(idA != Self.deviceID(firstSyncB))

        let status = try await server.terminate()
        #expect(status == 0, "the server stopped with \(status): \(String(decoding: server.standardError, as: UTF8.self))")
    }

    @Test("records --stack ota refuses a store that never named its account, and an unknown LUID")
    func refusals() async throws {
        let tool = try #require(anchorage, "the anchorage executable was not found beside the test bundle")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ota-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let device = ["--store", "sqlite:" + folder.appendingPathComponent("device.sqlite").path]

        let anonymous = try await ChildProcess.run(tool, arguments: ["records", "save", "--stack", "ota", Self.contact, "first name=Ada"] + device)
        #expect(anonymous.status == 64, "\(anonymous.errorText)")
        #expect(anonymous.errorText.contains("--user"), "\(anonymous.errorText)")

        let unknown = try await ChildProcess.run(tool, arguments: ["records", "delete", "--stack", "ota", "--user", "ada", "Lnothing"] + device)
        #expect(unknown.status == 67, "\(unknown.errorText)")
        #expect(unknown.errorText.contains("Lnothing"), "\(unknown.errorText)")

        // The Aquasync records are untouched by the OTA options: a model is still required for them.
        let aquasync = try await ChildProcess.run(tool, arguments: ["records", "list"] + device)
        #expect(aquasync.status == 64, "\(aquasync.errorText)")
    }

    /// Reads the lines of `anchorage records list --stack ota`.
    static func listed(_ output: String) throws -> [Listed] {
        try output.split(separator: "\n").map { line in
            let value = try JSONCodec().decode(Array(line.utf8))
            return Listed(
                luid: try #require(value["luid"]?.stringValue, "\(line)"),
                entity: try #require(value["entity"]?.stringValue, "\(line)"),
                fields: try #require(value["fields"]?.dictionaryValue, "\(line)"))
        }
    }

    /// The device id in a line of `anchorage sync --stack ota`: "… (device ID): …".
    static func deviceID(_ output: String) -> String? {
        guard let start = output.range(of: "(device ")?.upperBound, let end = output[start...].firstIndex(of: ")") else { return nil }
        return String(output[start..<end])
    }
}
