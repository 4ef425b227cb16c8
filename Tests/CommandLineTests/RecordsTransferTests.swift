import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// `anchorage records import` and `export` through the built tool, on SQLite
/// device stores: a file of records goes in, comes out in every format, and
/// goes into another store unchanged; a bad file saves nothing. Imports run
/// with `--batch-size 500`, so a file takes several batches: checked side by
/// side, then saved while the next is parsed.
@Suite("anchorage records import and export: every stack, every format, nothing saved from a bad file")
struct RecordsTransferTests {
    /// 1,200 records: three batches of ``batch``.
    static let count = 1_200
    /// The import's batch size in these tests.
    static let batch = ["--batch-size", "500"]

    /// The records file of `stack` in JSON Lines, each record with text, a number, a date and data.
    static func jsonLines(_ stack: String) -> String {
        (0..<count).map { index in
            let fields =
                #"{"name":"person \#(index)","zip":"0\#(index)","born":\#(1800 + index),"#
                + #""when":{"$date":"2026-01-01T00:00:00Z"},"photo":{"$data":"AAEC/w=="}}"#
            switch stack {
            case "ota": return #"{"entity":"com.apple.contacts.Contact","fields":\#(fields)}"#
            default: return #"{"fields":\#(fields)}"#
            }
        }.joined(separator: "\n") + "\n"
    }

    /// The arguments that name the records of `stack` before the file.
    static func naming(_ stack: String) -> [String] {
        switch stack {
        case "aquasync": ["Contact"]
        case "appsync": ["--stack", "appsync", "contact"]
        default: ["--stack", "ota", "--user", "ada"]
        }
    }

    /// The fields of every record `records list` prints for the store at `path`, sorted by name.
    static func listedFields(_ tool: AnchorageTool, _ stack: String, _ path: String) async throws -> [SyncValue] {
        let listed = try await tool.run(["records", "list", "--store", "sqlite:" + path] + naming(stack))
        try #require(listed.status == 0, "records list: \(listed.errorText)")
        let lines = String(decoding: listed.standardOutput, as: UTF8.self).split(separator: "\n")
        return try lines.map { try #require(JSONCodec().decode(Array($0.utf8))["fields"]) }
            .sorted { ($0["name"]?.stringValue ?? "") < ($1["name"]?.stringValue ?? "") }
    }

    @Test("a file imported, exported in each format and imported again gives the same records", arguments: ["aquasync", "appsync", "ota"])
    func roundTrip(stack: String) async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("records-transfer")
        let source = folder.path("records.jsonl")
        try Data(Self.jsonLines(stack).utf8).write(to: URL(fileURLWithPath: source))
        let first = folder.path("first.sqlite")
        let imported = try await tool.run(["records", "import", "--store", "sqlite:" + first] + Self.batch + Self.naming(stack) + [source])
        try #require(imported.status == 0, "records import: \(imported.errorText)")
        #expect(String(decoding: imported.standardOutput, as: UTF8.self) == "imported \(Self.count) records\n")
        let original = try await Self.listedFields(tool, stack, first)
        #expect(original.count == Self.count)
        #expect(original.first?["when"] == ["$date": "2026-01-01T00:00:00Z"])
        #expect(original.first?["photo"] == ["$data": "AAEC/w=="])
        #expect(original.first?["zip"] == "00", "text stays text")

        for format in ["jsonl", "json", "plist", "bplist", "msgpack"] {
            let file = folder.path("export.\(format)")
            let exported = try await tool.run(["records", "export", "--store", "sqlite:" + first] + Self.naming(stack) + [file])
            try #require(exported.status == 0, "records export to .\(format): \(exported.errorText)")
            let again = folder.path("again-\(format).sqlite")
            let reimported = try await tool.run(["records", "import", "--store", "sqlite:" + again] + Self.batch + Self.naming(stack) + [file])
            try #require(reimported.status == 0, "records import of .\(format): \(reimported.errorText)")
            #expect(try await Self.listedFields(tool, stack, again) == original, "through .\(format)")
        }
    }

    @Test("a bad record anywhere in the file saves nothing and names its line", arguments: ["aquasync", "appsync", "ota"])
    func badRecordSavesNothing(stack: String) async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("records-transfer-bad")
        let source = folder.path("records.jsonl")
        // The last line is not a record: the 1,200 before fill batches, yet none is saved.
        try Data((Self.jsonLines(stack) + #"{"fields": 7}"# + "\n").utf8).write(to: URL(fileURLWithPath: source))
        let store = folder.path("device.sqlite")
        let outcome = try await tool.run(["records", "import", "--store", "sqlite:" + store] + Self.batch + Self.naming(stack) + [source])
        #expect(outcome.status == 65)
        #expect(outcome.errorText == "anchorage: \(source), line \(Self.count + 1): a record needs \"fields\", an object\n")
        let listed = try await tool.run(["records", "list", "--store", "sqlite:" + store] + Self.naming(stack))
        #expect(listed.standardOutput.isEmpty, "nothing was saved")

        let unknown = try await tool.run(["records", "import", "--store", "sqlite:" + store] + Self.naming(stack) + [folder.path("x.csv")])
        #expect(unknown.status == 64)
        #expect(unknown.errorText.contains("cannot tell the format of"))
    }

    @Test("a JSON Lines import counts lines across batches, skips blank ones, reports the first bad line, and reads standard input")
    func linesAcrossBatches() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("records-transfer-lines")
        // A blank line after every tenth record: records and line numbers part ways.
        var lines = Self.jsonLines("aquasync").split(separator: "\n").enumerated().flatMap { index, line in
            index % 10 == 9 ? [String(line), "  "] : [String(line)]
        }
        let bad = folder.path("bad.jsonl")
        var broken = lines
        broken[1_100] = #"{"fields": {"when": {"$date": "yesterday"}}}"#   // in the third batch
        broken[700] = #"{"fields": [1]}"#                                    // in the second: the one reported
        broken[1_200] = "{"                                                   // in the third again
        try Data(broken.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: bad))
        let store = folder.path("device.sqlite")
        let refused = try await tool.run(["records", "import", "--store", "sqlite:" + store] + Self.batch + ["Contact", bad])
        #expect(refused.status == 65)
        #expect(refused.errorText.hasPrefix("anchorage: \(bad), line 701: "), "the first bad line: \(refused.errorText)")
        let listed = try await tool.run(["records", "list", "--store", "sqlite:" + store, "Contact"])
        #expect(listed.standardOutput.isEmpty, "nothing was saved")

        // The file ends without a line break, after a blank line and a record.
        lines.append(#"{"fields": {"name": "last"}}"#)
        let good = folder.path("good.jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: good))
        let imported = try await tool.run(["records", "import", "--store", "sqlite:" + store] + Self.batch + ["Contact", good])
        try #require(imported.status == 0, "records import: \(imported.errorText)")
        #expect(String(decoding: imported.standardOutput, as: UTF8.self) == "imported \(Self.count + 1) records\n")

        let piped = folder.path("piped.sqlite")
        let fromInput = try await tool.run(
            ["records", "import", "--store", "sqlite:" + piped] + Self.batch + ["Contact", "-"], input: Array(lines.joined(separator: "\n").utf8))
        try #require(fromInput.status == 0, "records import -: \(fromInput.errorText)")
        #expect(try await Self.listedFields(tool, "aquasync", piped) == Self.listedFields(tool, "aquasync", store))
    }
}
