import Foundation
import SyncTesting
import TestSupport
import Testing

/// `anchorage serve --quota-records/--quota-bytes`, driven by `anchorage records`
/// and `anchorage sync` over real HTTP on SQLite stores, in each stack.
@Suite("anchorage serve: per-account quotas")
struct QuotaTests {
    static let password = "quota-password"

    /// How one stack's records are named on the command line.
    struct Stack: Sendable, CustomTestStringConvertible {
        var name: String
        /// Arguments before the fields of `records save`, and what names the records in `list`.
        var collection: [String]
        /// The answer a refused push ends with, as `anchorage sync` reports it.
        var refusal: String
        var testDescription: String { name }

        func device(_ store: String) -> [String] {
            ["--stack", name, "--store", "sqlite:" + store] + (name == "ota" ? ["--user", "ada"] : [])
        }
        func save(_ store: String, _ fields: [String]) -> [String] {
            ["records", "save"] + device(store) + collection + fields
        }
        func list(_ store: String) -> [String] {
            ["records", "list"] + device(store) + (name == "ota" ? [] : collection)
        }
        func delete(_ store: String, id: String) -> [String] {
            ["records", "delete"] + device(store) + (name == "ota" ? [] : collection) + [id]
        }
    }

    static let stacks = [
        Stack(name: "aquasync", collection: ["Contact"], refusal: "server answered 507"),
        Stack(name: "appsync", collection: ["booking"], refusal: "server answered 507"),
        Stack(name: "ota", collection: ["com.apple.contacts.Contact"], refusal: "E_LimitExceeded (611)"),
    ]

    @Test(
        "an upload past the record quota gets the protocol's no-space answer and stores nothing; the count survives a restart; a delete frees room",
        arguments: stacks)
    func recordQuota(stack: Stack) async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("quota-\(stack.name)")
        let added = try await tool.run(
            ["users", "add", "ada", "--iterations", "1000"], input: Array("\(Self.password)\n".utf8),
            workingDirectory: folder.path)
        try #require(added.status == 0, "\(added.errorText)")
        let serveArguments = ["--store", "sqlite:" + folder.path("server.sqlite"), "--quota-records", "2", "--log-level", "error"]
        var server = try await tool.serve(serveArguments, workingDirectory: folder.path)
        let environment = ["ANCHORAGE_PASSWORD": Self.password]
        func run(_ arguments: [String]) async throws -> ChildProcess.Outcome {
            try await tool.run(arguments, environment: environment, workingDirectory: folder.path)
        }
        func save(_ store: String, _ fields: [String]) async throws -> String {
            let saved = try await run(stack.save(store, fields))
            try #require(saved.status == 0, "records save: \(saved.errorText)")
            return saved.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func sync(_ store: String) async throws -> ChildProcess.Outcome {
            try await run(["sync", "--server", server.url.absoluteString, "--user", "ada"] + stack.device(store))
        }
        func names(_ store: String) async throws -> [String] {
            let pulled = try await sync(store)
            try #require(pulled.status == 0, "sync of a fresh device: \(pulled.errorText)")
            let listed = try await run(stack.list(store))
            try #require(listed.status == 0, "records list: \(listed.errorText)")
            return listed.outputText.split(separator: "\n").compactMap { line in
                ["A", "B", "C"].first { line.contains("\"name\":\"\($0)\"") }
            }.sorted()
        }

        let first = try await save("a.sqlite", ["name=A", "pk=1"])
        _ = try await save("a.sqlite", ["name=B", "pk=2"])
        let underQuota = try await sync("a.sqlite")
        #expect(underQuota.status == 0, "two records fit a quota of two: \(underQuota.errorText)")

        _ = try await save("a.sqlite", ["name=C", "pk=3"])
        let overQuota = try await sync("a.sqlite")
        #expect(overQuota.status == 69)
        let lines = overQuota.errorText.split(separator: "\n")
        #expect(
            lines.count == 1 && lines[0].contains(stack.refusal) && lines[0].contains("at most 2 records"),
            "one line with the protocol's answer: \(overQuota.errorText)")
        #expect(!overQuota.errorText.contains("attempts"), "a quota is not retried: \(overQuota.errorText)")
        #expect(try await names("b.sqlite") == ["A", "B"], "the server stored nothing of the refused upload")

        // The count is in the store, not in the process.
        #expect(try await server.process.terminate() == 0)
        server = try await tool.serve(serveArguments, workingDirectory: folder.path)
        #expect(try await sync("a.sqlite").status == 69, "still over the quota after a restart")

        // A delete in the same upload makes room for the new record.
        let deleted = try await run(stack.delete("a.sqlite", id: first))
        try #require(deleted.status == 0, "records delete: \(deleted.errorText)")
        let withDelete = try await sync("a.sqlite")
        #expect(withDelete.status == 0, "one deleted, one added: \(withDelete.errorText)")
        #expect(try await names("c.sqlite") == ["B", "C"])
        #expect(try await server.process.terminate() == 0)
    }

    @Test("an upload past the byte quota is answered 507 and stores nothing; a smaller one fits")
    func byteQuota() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("quota-bytes")
        let added = try await tool.run(
            ["users", "add", "ada", "--iterations", "1000"], input: Array("\(Self.password)\n".utf8),
            workingDirectory: folder.path)
        try #require(added.status == 0, "\(added.errorText)")
        let server = try await tool.serve(
            ["--store", "memory", "--quota-bytes", "400", "--log-level", "error"], workingDirectory: folder.path)
        let environment = ["ANCHORAGE_PASSWORD": Self.password]
        func run(_ arguments: [String]) async throws -> ChildProcess.Outcome {
            try await tool.run(arguments, environment: environment, workingDirectory: folder.path)
        }
        let device = ["--stack", "appsync", "--store", "sqlite:" + folder.path("a.sqlite")]
        let sync = ["sync", "--server", server.url.absoluteString, "--user", "ada"] + device

        #expect(try await run(["records", "save"] + device + ["booking", "name=small", "pk=1"]).status == 0)
        let small = try await run(sync)
        #expect(small.status == 0, "a small record fits 400 bytes: \(small.errorText)")

        let big = String(repeating: "x", count: 500)
        #expect(try await run(["records", "save"] + device + ["booking", "note=\(big)", "pk=2"]).status == 0)
        let refused = try await run(sync)
        #expect(refused.status == 69)
        #expect(refused.errorText.contains("server answered 507") && refused.errorText.contains("at most 400 bytes"), "\(refused.errorText)")

        let fresh = ["--stack", "appsync", "--store", "sqlite:" + folder.path("b.sqlite")]
        #expect(try await run(["sync", "--server", server.url.absoluteString, "--user", "ada"] + fresh).status == 0)
        let listed = try await run(["records", "list"] + fresh + ["booking"])
        #expect(listed.outputText.contains("small") && !listed.outputText.contains(big), "\(listed.outputText)")
        #expect(try await server.process.terminate() == 0)
    }
}
