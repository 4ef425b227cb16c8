import BenchmarkShapes
import Foundation

/// `codec-ratios [--repetitions N] [--markdown FILE] [--only CODEC]`: times every Anchorage
/// codec and its peers on the standard shapes and prints how their speeds compare.
@main
enum CodecRatios {
    static func main() throws {
        let options: Options
        do {
            options = try Options(CommandLine.arguments.dropFirst())
        } catch {
            FileHandle.standardError.write(Data("codec-ratios: \(error)\n\(Options.usage)\n".utf8))
            exit(64)
        }
        #if DEBUG
            FileHandle.standardError.write(Data("codec-ratios: a debug build; run with -c release for real numbers\n".utf8))
        #endif
        var report = RatioReport(repetitions: options.repetitions)
        for shape in BenchmarkShape.allCases {
            var timings: [String: Timing] = [:]
            func timing(_ subject: CodecSubject, _ direction: CodecDirection) throws -> Timing {
                let key = "\(subject)/\(direction)"
                if let known = timings[key] { return known }
                log("timing \(subject) \(direction) \(shape)")
                let measured = try Timing.best(of: options.repetitions, CodecOperation(subject, direction, shape))
                timings[key] = measured
                return measured
            }
            for comparison in Comparison.all where options.includes(comparison) {
                let direction = comparison.direction
                let (oursKey, peerKey) = ("\(comparison.ours)/\(direction)", "\(comparison.peer)/\(direction)")
                if comparison.target != nil, timings[oursKey] == nil, timings[peerKey] == nil {
                    // A target's two sides are timed in alternation, on the machine as it is at that moment.
                    log("timing \(comparison.ours) and \(comparison.peer) \(direction) \(shape), in turn")
                    let operations = [
                        try CodecOperation(comparison.ours, direction, shape), try CodecOperation(comparison.peer, direction, shape),
                    ]
                    let measured = try Timing.best(of: options.repetitions, operations)
                    (timings[oursKey], timings[peerKey]) = (measured[0], measured[1])
                }
                report.rows.append(
                    RatioReport.Row(
                        comparison: comparison, shape: shape,
                        ours: try timing(comparison.ours, comparison.direction),
                        peer: try timing(comparison.peer, comparison.direction)))
            }
            if options.only == nil {
                report.sizes.append(
                    RatioReport.SizeRow(
                        shape: shape,
                        binaryBytes: try timing(.anchorageBinaryPlist, .encode).bytes,
                        xmlBytes: try timing(.anchorageXMLPlist, .encode).bytes))
            }
        }
        print(report.textTable(), terminator: "")
        if let markdown = options.markdown {
            try Data(report.markdownTable().utf8).write(to: URL(fileURLWithPath: markdown), options: .atomic)
            log("wrote \(markdown)")
        }
    }

    private static func log(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

/// The command line of `codec-ratios`.
struct Options {
    var repetitions = 5
    var markdown: String?
    /// Only the comparisons of Anchorage codecs whose name contains this text (`--only MessagePack`).
    var only: String?

    static let usage = "usage: codec-ratios [--repetitions N] [--markdown FILE] [--only CODEC]"

    /// Whether the run measures `comparison`.
    func includes(_ comparison: Comparison) -> Bool {
        guard let only else { return true }
        return comparison.ours.description.localizedCaseInsensitiveContains(only)
    }

    init<Arguments: Collection<String>>(_ arguments: Arguments) throws {
        var remaining = Array(arguments)[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--repetitions":
                guard let text = remaining.popFirst(), let count = Int(text), count > 0 else {
                    throw UsageError(description: "--repetitions needs a positive number")
                }
                repetitions = count
            case "--markdown":
                guard let path = remaining.popFirst() else { throw UsageError(description: "--markdown needs a file") }
                markdown = path
            case "--only":
                guard let text = remaining.popFirst() else { throw UsageError(description: "--only needs a codec name") }
                only = text
            case "-h", "--help":
                print(Self.usage)
                exit(0)
            default:
                throw UsageError(description: "unknown argument \(argument)")
            }
        }
    }
}

/// A command line `codec-ratios` does not understand.
struct UsageError: Error, CustomStringConvertible {
    var description: String
}
