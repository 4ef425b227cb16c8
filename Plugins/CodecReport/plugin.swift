import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory codec-report`: builds the
/// `anchorage` tool in release mode and runs `anchorage sizes` on the standard
/// contact shapes, writing the size table and chart into `docs/`.
///
/// ```
/// swift package --allow-writing-to-package-directory codec-report
/// swift package --allow-writing-to-package-directory codec-report --repetitions 9
/// swift package --allow-writing-to-package-directory codec-report --markdown docs/t.md --chart docs/c.svg
/// ```
///
/// `--markdown` and `--chart` are relative to the package; other arguments go to `anchorage sizes` unchanged.
@main
struct CodecReport: CommandPlugin {
    /// Where the Markdown table goes unless `--markdown` says otherwise.
    static let defaultMarkdownPath = "docs/codec-sizes-table.md"
    /// Where the SVG chart goes unless `--chart` says otherwise.
    static let defaultChartPath = "docs/codec-sizes.svg"

    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let markdownPath = extractor.extractOption(named: "markdown").last ?? Self.defaultMarkdownPath
        let chartPath = extractor.extractOption(named: "chart").last ?? Self.defaultChartPath
        let passedOn = extractor.remainingArguments

        print("Building anchorage (release)…")
        let build = try packageManager.build(.product("anchorage"), parameters: .init(configuration: .release))
        guard build.succeeded else {
            print(build.logText)
            throw CodecReportError("building the anchorage product failed")
        }
        guard
            let tool = build.builtArtifacts.first(where: {
                $0.kind == .executable && $0.url.lastPathComponent == "anchorage"
            })
        else { throw CodecReportError("the build did not produce the anchorage executable") }

        let packageDirectory = context.package.directoryURL
        let markdown = packageDirectory.appending(path: markdownPath)
        let chart = packageDirectory.appending(path: chartPath)
        for file in [markdown, chart] {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        }

        let process = Process()
        process.executableURL = tool.url
        process.currentDirectoryURL = packageDirectory
        process.arguments =
            ["sizes", "--markdown", markdown.path(percentEncoded: false), "--chart", chart.path(percentEncoded: false)]
            + passedOn
        print("Running anchorage \(process.arguments?.joined(separator: " ") ?? "")")
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw CodecReportError("anchorage sizes failed with status \(process.terminationStatus)")
        }
        print("Wrote \(markdown.path(percentEncoded: false))")
        print("Wrote \(chart.path(percentEncoded: false))")
    }
}

/// Why the codec report could not be made.
struct CodecReportError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
