import Aquasync
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
            contacts without photos); with --deltapack also 'deltapack', the records as one Aquasync
            DeltaPack. Times are the best of --repetitions runs on this machine.
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

    @Flag(help: "Also measure the standard records as one Aquasync DeltaPack.")
    var deltapack = false

    @Option(
        help: """
            Instead of measuring, write the standard records (10,000 contacts) here as JSON Lines, for \
            `anchorage records import Contact FILE`: the same data a benchmark moves.
            """)
    var writeRecords: String?

    func run() throws {
        if let writeRecords {
            var text = ""
            for contact in SampleContacts().make(count: 10_000, photos: false) {
                var fields = contact.dictionaryValue ?? [:]
                let gid = fields.removeValue(forKey: "uuid")
                var line: [String: SyncValue] = ["fields": RecordFields.listedFields(fields)]
                if let gid { line["gid"] = gid }
                text += try RecordFields.line(line) + "\n"
            }
            try Data(text.utf8).write(to: URL(fileURLWithPath: writeRecords), options: .atomic)
            return
        }
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
            if deltapack {
                let pack = Self.standardDeltaPack()
                report.measure(shape: "deltapack", repetitions: repetitions) { pack.value(for: $0) }
            }
        }
        print(report.textTable(), terminator: "")
        if let markdown {
            try Data(report.markdownTable().utf8).write(to: URL(fileURLWithPath: markdown), options: .atomic)
        }
        if let chart {
            try Data(SizeChart.svg(report).utf8).write(to: URL(fileURLWithPath: chart), options: .atomic)
        }
    }

    /// The standard records as the DeltaPack a device would push: 10,000
    /// contacts of model `Contact`, each with its sync columns.
    static func standardDeltaPack() -> DeltaPack {
        let records = SampleContacts().make(count: 10_000, photos: false)
        let deltas = records.enumerated().map { index, contact in
            var fields = contact.dictionaryValue ?? [:]
            let gid = fields.removeValue(forKey: "uuid")?.stringValue ?? "00000000-0000-4000-8000-000000000000"
            return Delta(
                gid: gid, deviceToken: "8d3f1c2a-5b6e-4f70-9a81-b2c3d4e5f607",
                localTimestamp: 1_700_000_000_000 + Int64(index), isDeleted: false, fields: fields)
        }
        return DeltaPack(id: "5f0c6d1e-2a3b-4c5d-8e9f-a0b1c2d3e4f5", models: ["Contact": deltas])
    }
}
