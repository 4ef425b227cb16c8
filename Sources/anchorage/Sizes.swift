import ArgumentParser
import Foundation
import SyncCore
import SyncSamples

/// `anchorage sizes`: how large a document is in every codec, and how fast each encodes and decodes it.
struct Sizes: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare codecs on a file or on the standard contact shapes: bytes, gzip bytes, time.",
        discussion: """
            Without --input, measures the two standard shapes: 'message' (an OTA sync-changes
            message with 1,000 contacts, one in ten with a 20-60 KB photo) and 'records' (10,000
            contacts without photos). Times are the best of --repetitions runs on this machine.
            """
    )

    @Option(help: "A document to measure, in any supported format.")
    var input: String?

    @Option(help: "The input's codec; detected when omitted.")
    var from: CodecChoice?

    @Option(help: "Write an SVG bar chart of the sizes here.")
    var chart: String?

    @Option(help: "Write the table as Markdown here.")
    var markdown: String?

    @Option(help: "How many times each encode and decode runs; the best time counts.")
    var repetitions = 5

    func run() throws {
        var report = SizeReport()
        if let input {
            guard let data = FileManager.default.contents(atPath: input) else { throw failure("cannot read \(input)", code: 66) }
            let bytes = Array(data)
            guard let codec = from ?? CodecChoice.detect(bytes) else {
                throw ValidationError("cannot tell the format of \(input); name it with --from")
            }
            let value: SyncValue
            do {
                value = try codec.codec.decode(bytes)
            } catch {
                throw failure("\(input) is not valid \(codec.rawValue): \(error)", code: 65)
            }
            report.measure(value, shape: URL(fileURLWithPath: input).lastPathComponent, repetitions: repetitions)
        } else {
            report.measure(SampleContacts.standardMessage(), shape: "message", repetitions: repetitions)
            report.measure(SampleContacts.standardRecords(), shape: "records", repetitions: repetitions)
        }
        print(report.textTable(), terminator: "")
        if let markdown {
            try Data(report.markdownTable().utf8).write(to: URL(fileURLWithPath: markdown), options: .atomic)
        }
        if let chart {
            try Data(SizeChart.svg(report).utf8).write(to: URL(fileURLWithPath: chart), options: .atomic)
        }
    }
}
