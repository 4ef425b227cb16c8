import Foundation
import SyncTesting
import TestSupport
import Testing

/// `anchorage sync --priority ask`, `anchorage conflicts list` and
/// `anchorage conflicts resolve`, as separate processes: every command is a
/// fresh start of the device, so a conflict that is listed and answered has
/// survived restarts.
@Suite("anchorage conflicts")
struct ConflictsCommandTests {
    static let password = "conflicts-cli-password"

    /// One stack's command-line words.
    struct Stack: Sendable, CustomStringConvertible {
        var name: String
        /// Options every `records` and `conflicts` command takes.
        var deviceOptions: [String]
        /// What `records save` saves (model, type or entity), and what `records list` lists.
        var saveModel: String, listModel: [String]
        /// The `records save` option naming the record to replace, and the key of a listed line holding it.
        var idOption: String, idKey: String
        /// `anchorage serve` options.
        var serveOptions: [String] = []
        /// Whether every device names a record by the same id (not OTA, whose LUIDs are each device's own).
        var sharesIDs = true

        var description: String { name }

        static let aquasync = Stack(
            name: "aquasync", deviceOptions: ["--stack", "aquasync"], saveModel: "Contact", listModel: ["Contact"],
            idOption: "--gid", idKey: "gid")
        static let appsync = Stack(
            name: "appsync", deviceOptions: ["--stack", "appsync"], saveModel: "booking", listModel: ["booking"],
            idOption: "--guid", idKey: "guid")
        /// OTA's server decides conflicts at its mingle unless told to leave them to the device.
        static let ota = Stack(
            name: "ota", deviceOptions: ["--stack", "ota", "--user", "ada"], saveModel: "com.apple.contacts.Contact",
            listModel: [], idOption: "--luid", idKey: "luid", serveOptions: ["--ota-conflicts", "device"], sharesIDs: false)
    }

    /// A server and two devices of one account.
    struct Setup {
        let tool: AnchorageTool
        let folder: TemporaryFolder
        let server: AnchorageTool.Server
        let stack: Stack

        init(_ stack: Stack, serving options: [String] = []) async throws {
            tool = try AnchorageTool()
            folder = try TemporaryFolder("conflicts-\(stack.name)")
            self.stack = stack
            let users = folder.path("users.txt")
            let added = try await tool.run(
                ["users", "add", "ada", "--file", users, "--iterations", "1000"],
                input: Array("\(ConflictsCommandTests.password)\n".utf8))
            try #require(added.status == 0, "anchorage users add: \(added.errorText)")
            server = try await tool.serve(
                ["--store", "memory", "--users", users, "--log-level", "warning"] + stack.serveOptions + options)
        }

        func device(_ name: String) -> [String] { ["--store", "sqlite:" + folder.path("\(name).sqlite")] }

        func run(_ arguments: [String]) async throws -> ChildProcess.Outcome {
            let outcome = try await tool.run(
                arguments, environment: ["ANCHORAGE_PASSWORD": ConflictsCommandTests.password, "ANCHORAGE_TOKEN": ""])
            try #require(outcome.status == 0, "anchorage \(arguments.joined(separator: " ")): \(outcome.errorText)")
            return outcome
        }

        func save(_ device: String, id: String?, _ field: String) async throws -> String {
            let idArguments = id.map { [stack.idOption, $0] } ?? []
            let saved = try await run(
                ["records", "save"] + stack.deviceOptions + self.device(device) + idArguments + [stack.saveModel, "--", field])
            return saved.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func sync(_ device: String, _ extra: [String] = []) async throws -> String {
            try await run(
                ["sync", "--stack", stack.name, "--server", server.url.absoluteString, "--user", "ada"] + self.device(device)
                    + extra
            ).outputText
        }

        /// The device's live records: id → fields.
        func records(_ device: String) async throws -> [String: [String: String]] {
            let listed = try await run(["records", "list"] + stack.deviceOptions + self.device(device) + stack.listModel)
            return try Dictionary(uniqueKeysWithValues: jsonLines(listed.outputText).map { line in
                let fields = (line["fields"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
                return (line[stack.idKey] as? String ?? "", fields)
            })
        }

        func conflicts(_ device: String) async throws -> [[String: Any]] {
            try jsonLines(try await run(["conflicts", "list"] + stack.deviceOptions + self.device(device)).outputText)
        }
    }

    static func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    @Test(
        "a record edited on two devices waits on the second for an answer; each answer converges on both",
        arguments: [Stack.aquasync, Stack.appsync, Stack.ota], ["mine", "theirs", "both"])
    func askTheUser(stack: Stack, keep: String) async throws {
        let setup = try await Setup(stack)
        let id = try await setup.save("a", id: nil, "guest=Ada")
        _ = try await setup.sync("a")
        _ = try await setup.sync("b")
        let idOnB = stack.sharesIDs ? id : try #require(try await setup.records("b").keys.first)
        _ = try await setup.save("a", id: id, "guest=Ada from A")
        _ = try await setup.sync("a")
        _ = try await setup.save("b", id: idOnB, "guest=Ada from B")

        let asked = try await setup.sync("b", ["--priority", "ask"])
        #expect(asked.contains("1 conflict waits for an answer"), "\(asked)")
        let listed = try await setup.conflicts("b")
        try #require(listed.count == 1, "\(listed)")
        let conflict = listed[0]
        #expect((conflict["id"] as? String)?.hasSuffix(idOnB) == true, "\(conflict)")
        #expect(conflict["action"] as? String == "modify")
        #expect((conflict["base"] as? [String: Any])?["guest"] as? String == "Ada")
        #expect((conflict["mine"] as? [String: Any])?["guest"] as? String == "Ada from B")
        #expect((conflict["theirs"] as? [String: Any])?["guest"] as? String == "Ada from A")
        #expect(conflict["answer"] is NSNull)
        #expect(try await setup.records("b")[idOnB]?["guest"] == "Ada from B", "the device keeps its version while it waits")

        let resolved = try await setup.run(
            ["conflicts", "resolve", idOnB, "--keep", keep] + stack.deviceOptions + setup.device("b"))
        #expect(resolved.outputText.contains("keeping \(keep)"), "\(resolved.outputText)")
        let settled = try await setup.sync("b", ["--priority", "ask"])
        #expect(settled.contains("no conflict waits for an answer"), "\(settled)")
        _ = try await setup.sync("a")
        _ = try await setup.sync("b")

        let onA = try await setup.records("a").values.compactMap { $0["guest"] }.sorted()
        let onB = try await setup.records("b").values.compactMap { $0["guest"] }.sorted()
        #expect(onA == onB, "both devices hold the same records")
        switch keep {
        case "mine": #expect(onA == ["Ada from B"])
        case "theirs": #expect(onA == ["Ada from A"])
        default: #expect(onA == ["Ada from A", "Ada from B"])
        }
        #expect(try await setup.conflicts("b").isEmpty)
        #expect(try await setup.server.process.terminate() == 0)
    }

    @Test(
        "a record the server refuses (--max-record-bytes) is reported and dropped; the others go through",
        arguments: [Stack.aquasync, Stack.appsync, Stack.ota])
    func refusedRecord(stack: Stack) async throws {
        let setup = try await Setup(stack, serving: ["--max-record-bytes", "200"])
        _ = try await setup.save("a", id: nil, "guest=Ada")
        let large = try await setup.save("a", id: nil, "guest=" + String(repeating: "x", count: 400))
        _ = try await setup.save("a", id: nil, "guest=Grace")
        let synced = try await setup.sync("a")
        let refusals = synced.split(separator: "\n").filter { $0.hasPrefix("refused ") }
        #expect(refusals.count == 1, "\(synced)")
        #expect(refusals.first?.contains(large) == true, "\(synced)")
        #expect(refusals.first?.contains("more than the 200 this server takes") == true, "\(synced)")
        let again = try await setup.sync("a")
        #expect(!again.contains("refused"), "the refused change left the journal: \(again)")
        _ = try await setup.sync("b")
        let onB = try await setup.records("b").values.compactMap { $0["guest"] }.sorted()
        #expect(onB == ["Ada", "Grace"])
        #expect(try await setup.records("a").count == 3, "the refused record keeps the device's version")
        #expect(try await setup.server.process.terminate() == 0)
    }

    @Test("resolving a conflict that is not there is one line and exit status 67")
    func noSuchConflict() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("conflicts-none")
        let outcome = try await tool.run(
            ["conflicts", "resolve", "nothing", "--keep", "mine", "--store", "sqlite:" + folder.path("d.sqlite")])
        #expect(outcome.status == 67, "\(outcome.errorText)")
        #expect(outcome.errorText == "anchorage: no conflict nothing waits for an answer\n", "\(outcome.errorText)")
        #expect(outcome.outputText.isEmpty)
    }
}
