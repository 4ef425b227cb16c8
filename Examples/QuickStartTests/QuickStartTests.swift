import Foundation
import SyncTesting
import Testing

@Suite("The README's first example is Examples/QuickStart/main.swift, and it runs")
struct QuickStartTests {
    /// The package's root folder: this file is Examples/QuickStartTests/QuickStartTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The text of the first ```swift block of `markdown`.
    static func firstSwiftBlock(of markdown: String) -> String? {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == "```swift" }),
            let end = lines[(start + 1)...].firstIndex(where: { $0 == "```" })
        else { return nil }
        return lines[(start + 1)..<end].joined(separator: "\n")
    }

    @Test("README.md's first swift block is main.swift, character for character")
    func readmeShowsTheExample() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(
            contentsOf: Self.root.appendingPathComponent("Examples/QuickStart/main.swift"), encoding: .utf8)
        let block = try #require(Self.firstSwiftBlock(of: readme), "README.md has no ```swift block")
        #expect(block == example.trimmingSuffix(while: \.isNewline))
    }

    @Test("the example syncs a contact from the phone to the laptop and an edit back")
    func exampleRuns() async throws {
        let quickStart = try #require(ChildProcess.builtExecutable(named: "QuickStart"), "QuickStart is not built")
        let outcome = try await ChildProcess.run(quickStart)
        #expect(outcome.status == 0, "\(outcome.errorText)")
        #expect(outcome.outputText == "laptop has Ada Lovelace\nphone has Ada King\n")
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var text = self[...]
        while let last = text.last, predicate(last) { text.removeLast() }
        return String(text)
    }
}
