import Foundation
import SyncTesting
import Testing

/// Every ```swift block of README.md is compiled by CI: the first is Examples/QuickStart/main.swift
/// (`QuickStartTests`), each other Swift block is a file of Examples/QuickStartTests/ReadmeBlocks/, compiled
/// with this test target, and a block that is a package manifest (`// swift-tools-version`) is evaluated by
/// `swift package dump-package` and may name only products this package has.
@Suite("Every swift block of README.md is a file CI compiles")
struct ReadmeSwiftBlocksTests {
    /// The folder of the README's blocks that this test target compiles.
    static let blocksFolder = QuickStartTests.root.appendingPathComponent("Examples/QuickStartTests/ReadmeBlocks")

    /// The text of every ```swift block of `markdown`, in order.
    static func swiftBlocks(of markdown: String) -> [String] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        var blocks: [String] = []
        var index = lines.startIndex
        while let start = lines[index...].firstIndex(where: { $0 == "```swift" }),
            let end = lines[(start + 1)...].firstIndex(where: { $0 == "```" })
        {
            blocks.append(lines[(start + 1)..<end].joined(separator: "\n"))
            index = end + 1
        }
        return blocks
    }

    /// The Swift files that compiled code the README may show, by path relative to the package root.
    static func compiledExamples() throws -> [String: String] {
        var files: [String: String] = [:]
        let main = "Examples/QuickStart/main.swift"
        files[main] = try String(contentsOf: QuickStartTests.root.appendingPathComponent(main), encoding: .utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: blocksFolder.path) where name.hasSuffix(".swift") {
            files["Examples/QuickStartTests/ReadmeBlocks/\(name)"] = try String(
                contentsOf: blocksFolder.appendingPathComponent(name), encoding: .utf8)
        }
        return files.mapValues { $0.trimmingTrailingNewlines() }
    }

    static func readme() throws -> String {
        try String(contentsOf: QuickStartTests.root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    static func isManifest(_ block: String) -> Bool { block.hasPrefix("// swift-tools-version") }

    @Test("each swift block that is not a manifest is a compiled file, character for character")
    func blocksAreCompiledFiles() throws {
        let files = try Self.compiledExamples()
        let blocks = Self.swiftBlocks(of: try Self.readme()).filter { !Self.isManifest($0) }
        #expect(blocks.count >= 2)
        for block in blocks {
            let firstLine = block.split(separator: "\n").first.map(String.init) ?? ""
            let compiled = files.values.contains(block)
            #expect(
                compiled,
                "README.md's swift block starting \"\(firstLine)\" is no file of Examples/QuickStart or Examples/QuickStartTests/ReadmeBlocks; put it there, identical, so that CI compiles it")
        }
        for (path, text) in files where !blocks.contains(text) && path.contains("ReadmeBlocks") {
            Issue.record("\(path) is shown by no swift block of README.md; remove it or show it")
        }
    }

    @Test("a manifest block evaluates, and names only products of this package")
    func manifestBlocksEvaluate() async throws {
        let manifests = Self.swiftBlocks(of: try Self.readme()).filter(Self.isManifest)
        #expect(!manifests.isEmpty, "README.md shows no Package.swift")
        let products = try Self.libraryProducts()
        for manifest in manifests {
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("anchorage-readme-\(UUID().uuidString)/App", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            try manifest.write(to: folder.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
            let outcome = try await ChildProcess.run(
                "swift", arguments: ["package", "dump-package"], workingDirectory: folder.path)
            try #require(outcome.status == 0, "the README's Package.swift does not evaluate: \(outcome.errorText)")
            let named = Self.productNames(in: manifest)
            #expect(!named.isEmpty)
            for name in named {
                let known = products.contains(name)
                #expect(known, "the README's Package.swift names \(name), which is no library product of Package.swift")
            }
        }
    }

    /// The names of the library products Package.swift declares.
    static func libraryProducts() throws -> Set<String> {
        let manifest = try String(contentsOf: QuickStartTests.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        return Set(Self.matches(of: #"\.library\(name: "([^"]+)""#, in: manifest))
    }

    /// The product names a manifest depends on: `.product(name: "X", package: ...)`.
    static func productNames(in manifest: String) -> [String] {
        Self.matches(of: #"\.product\(name: "([^"]+)""#, in: manifest)
    }

    static func matches(of pattern: String, in text: String) -> [String] {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return expression.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = self[...]
        while let last = text.last, last.isNewline { text.removeLast() }
        return String(text)
    }
}
