import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import Testing

/// The `anchorage` executable, built beside the test bundle.
private let anchorage = ChildProcess.builtExecutable(named: "anchorage")

@Suite(
    "anchorage convert",
    .enabled(if: anchorage != nil, "the anchorage executable was not found beside the test bundle"))
struct ConvertCommandTests {
    static let document: SyncValue = [
        "name": "Ada", "born": 1815, "ratio": 0.25, "tags": ["math", "poetry"], "active": true,
    ]

    @Test("a document converted through every codec, with --from detected, comes back the same")
    func chainThroughEveryCodec() throws {
        let tool = try #require(anchorage)
        var bytes = try JSONCodec().encode(Self.document)
        for name in ["xml-plist", "binary-plist", "msgpack", "json"] {
            let outcome = try ChildProcess.run(tool, arguments: ["convert", "--to", name], input: bytes)
            #expect(outcome.status == 0, "converting to \(name): \(outcome.errorText)")
            bytes = outcome.standardOutput
        }
        #expect(try JSONCodec().decode(bytes) == Self.document)
    }

    @Test("malformed input exits non-zero with one clear line and writes nothing")
    func malformedInput() throws {
        let tool = try #require(anchorage)
        let outcome = try ChildProcess.run(
            tool, arguments: ["convert", "--from", "json", "--to", "msgpack"], input: Array(#"{"a": [1, 2"#.utf8))
        #expect(outcome.status != 0)
        #expect(outcome.standardOutput.isEmpty)
        let lines = outcome.errorText.split(separator: "\n")
        #expect(lines.count == 1, "\(outcome.errorText)")
        #expect(outcome.errorText.contains("json"))
    }

    @Test("null into a property list is refused, not dropped")
    func nullIntoPlist() throws {
        let tool = try #require(anchorage)
        let outcome = try ChildProcess.run(
            tool, arguments: ["convert", "--from", "json", "--to", "xml-plist"], input: Array(#"{"a": null}"#.utf8))
        #expect(outcome.status != 0)
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.errorText.contains("null"))
    }

    @Test("anchorage sizes measures a file in each format in every codec", arguments: ["json", "xml-plist", "binary-plist", "msgpack"])
    func sizesOfAFile(format: String) throws {
        let tool = try #require(anchorage)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sizes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let converted = try ChildProcess.run(
            tool, arguments: ["convert", "--from", "json", "--to", format], input: try JSONCodec().encode(Self.document))
        try #require(converted.status == 0, "\(converted.errorText)")
        let input = folder.appendingPathComponent("document")
        try Data(converted.standardOutput).write(to: input)
        let chart = folder.appendingPathComponent("chart.svg")

        let outcome = try ChildProcess.run(
            tool, arguments: ["sizes", "--input", input.path, "--repetitions", "1", "--chart", chart.path])
        #expect(outcome.status == 0, "\(outcome.errorText)")
        for codec in ["json", "xml-plist", "binary-plist", "msgpack"] {
            #expect(outcome.outputText.contains(codec), "no row for \(codec) in \(outcome.outputText)")
        }
        let svg = String(decoding: try Data(contentsOf: chart), as: UTF8.self)
        #expect(svg.hasPrefix("<svg") && svg.contains("</svg>"))
    }
}
