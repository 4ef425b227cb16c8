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
    func chainThroughEveryCodec() async throws {
        let tool = try #require(anchorage)
        var bytes = try JSONCodec().encode(Self.document)
        for name in ["xml-plist", "binary-plist", "msgpack", "json"] {
            let outcome = try await ChildProcess.run(tool, arguments: ["convert", "--to", name], input: bytes)
            #expect(outcome.status == 0, "converting to \(name): \(outcome.errorText)")
            bytes = outcome.standardOutput
        }
        #expect(try JSONCodec().decode(bytes) == Self.document)
    }

    @Test("malformed input exits non-zero with one clear line and writes nothing")
    func malformedInput() async throws {
        let tool = try #require(anchorage)
        let outcome = try await ChildProcess.run(
            tool, arguments: ["convert", "--from", "json", "--to", "msgpack"], input: Array(#"{"a": [1, 2"#.utf8))
        #expect(outcome.status != 0)
        #expect(outcome.standardOutput.isEmpty)
        let lines = outcome.errorText.split(separator: "\n")
        #expect(lines.count == 1, "\(outcome.errorText)")
        #expect(outcome.errorText.contains("json"))
    }

    /// A refusal the command must print as one `anchorage:` line, with its exit status.
    struct Refusal: Sendable, CustomStringConvertible {
        var name: String
        var arguments: [String]
        var input: [UInt8]
        var status: Int32
        var says: String
        var description: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(
            name: "a binary plist holding a NaN date, to JSON",
            arguments: ["convert", "--from", "binary-plist", "--to", "json"],
            input: hex("62706c6973743030337ff8000000000000080000000000000101000000000000000100000000000000000000000000000011"),
            status: 65, says: "finite"),
        Refusal(
            name: "the same, to XML plist, with the format detected",
            arguments: ["convert", "--to", "xml-plist"],
            input: hex("62706c6973743030337ff8000000000000080000000000000101000000000000000100000000000000000000000000000011"),
            status: 65, says: "finite"),
        Refusal(
            name: "a binary plist date at 1e300 s, to JSON",
            arguments: ["convert", "--to", "json"],
            input: hex("62706c6973743030337e37e43c8800759c080000000000000101000000000000000100000000000000000000000000000011"),
            status: 65, says: "years 0000–9999"),
        Refusal(
            name: "an XML plist that is not UTF-8 (libxml2's message has line breaks)",
            arguments: ["convert", "--from", "xml-plist", "--to", "json"],
            input: Array("<plist><string>".utf8) + [0xBF] + Array("</string></plist>".utf8),
            status: 65, says: "not well-formed XML"),
        Refusal(
            name: "an XML plist key with a line break, twice",
            arguments: ["convert", "--from", "xml-plist", "--to", "json"],
            input: Array("<plist><dict><key>a\nb</key><true/><key>a\nb</key><true/></dict></plist>".utf8),
            status: 65, says: #""a\nb""#),
        Refusal(
            name: "a MessagePack key with a line break, twice",
            arguments: ["convert", "--from", "msgpack", "--to", "json"],
            input: [0x82, 0xA3, 0x61, 0x0A, 0x62, 0x01, 0xA3, 0x61, 0x0A, 0x62, 0x02],
            status: 65, says: #""a\nb""#),
        Refusal(
            name: "input whose format cannot be detected",
            arguments: ["convert", "--to", "json"], input: Array("42".utf8), status: 64, says: "--from"),
        Refusal(
            name: "an unknown codec", arguments: ["convert", "--to", "yaml"], input: Array("{}".utf8), status: 64,
            says: "yaml"),
        Refusal(name: "an unknown option", arguments: ["convert", "--to", "json", "--frobnicate"], input: [], status: 64, says: "frobnicate"),
    ]

    @Test("a refusal is one line on standard error with its exit status, never a signal", arguments: refusals)
    func refusal(_ case: Refusal) async throws {
        let tool = try #require(anchorage)
        let outcome = try await ChildProcess.run(tool, arguments: `case`.arguments, input: `case`.input)
        #expect(outcome.status == `case`.status, "exit status \(outcome.status): \(outcome.errorText)")
        #expect(outcome.standardOutput.isEmpty, "\(outcome.outputText)")
        let lines = outcome.errorText.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "one line, ended: \(outcome.errorText)")
        #expect(outcome.errorText.hasPrefix("anchorage: "), "\(outcome.errorText)")
        #expect(outcome.errorText.contains(`case`.says), "\(outcome.errorText)")
        #expect(!outcome.errorText.contains("Error Domain="), "\(outcome.errorText)")
    }

    @Test("help still prints the usage, and wraps each paragraph itself", arguments: ["serve", "sync", "convert", "records"])
    func help(command: String) async throws {
        let tool = try #require(anchorage)
        let outcome = try await ChildProcess.run(tool, arguments: [command, "--help"])
        #expect(outcome.status == 0, "\(outcome.errorText)")
        #expect(outcome.outputText.contains("USAGE: anchorage \(command)"))
        // The discussion, before USAGE: a line that is not a paragraph's last is filled by wrapping;
        // a short one there means a line break written into the text.
        let overview = outcome.outputText.components(separatedBy: "USAGE:")[0]
        for paragraph in overview.components(separatedBy: "\n\n") {
            let lines = paragraph.split(separator: "\n").filter { !$0.hasPrefix("  ") }
            for line in lines.dropLast() {
                #expect(line.count >= 55, "'\(line)' in `anchorage \(command) --help` is broken mid-sentence")
            }
        }
    }

    @Test("null into a property list is refused, not dropped")
    func nullIntoPlist() async throws {
        let tool = try #require(anchorage)
        let outcome = try await ChildProcess.run(
            tool, arguments: ["convert", "--from", "json", "--to", "xml-plist"], input: Array(#"{"a": null}"#.utf8))
        #expect(outcome.status != 0)
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.errorText.contains("null"))
    }

    @Test("anchorage sizes measures a file in each format in every codec", arguments: ["json", "xml-plist", "binary-plist", "msgpack"])
    func sizesOfAFile(format: String) async throws {
        let tool = try #require(anchorage)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sizes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let converted = try await ChildProcess.run(
            tool, arguments: ["convert", "--from", "json", "--to", format], input: try JSONCodec().encode(Self.document))
        try #require(converted.status == 0, "\(converted.errorText)")
        let input = folder.appendingPathComponent("document")
        try Data(converted.standardOutput).write(to: input)
        let chart = folder.appendingPathComponent("chart.svg")

        let outcome = try await ChildProcess.run(
            tool, arguments: ["sizes", "--input", input.path, "--repetitions", "1", "--chart", chart.path])
        #expect(outcome.status == 0, "\(outcome.errorText)")
        for codec in ["json", "xml-plist", "binary-plist", "msgpack"] {
            #expect(outcome.outputText.contains(codec), "no row for \(codec) in \(outcome.outputText)")
        }
        let svg = String(decoding: try Data(contentsOf: chart), as: UTF8.self)
        #expect(svg.hasPrefix("<svg") && svg.contains("</svg>"))
    }
}

/// The bytes of a hexadecimal string.
private func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
