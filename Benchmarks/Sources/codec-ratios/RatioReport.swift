import BenchmarkShapes
import Foundation

/// The measured comparisons and sizes, as text and Markdown tables.
struct RatioReport {
    /// One measured comparison on one shape.
    struct Row {
        let comparison: Comparison
        let shape: BenchmarkShape
        let ours: Timing
        let peer: Timing

        /// Peer time over our time: above 1 when we are faster.
        var ratio: Double { peer.seconds / ours.seconds }
        var verdict: Verdict { Verdict(ratio: ratio, target: comparison.target) }

        var cells: [String] {
            let codec = comparison.ours.rawValue.replacingOccurrences(of: "Anchorage ", with: "")
            return [
                codec, comparison.direction.rawValue, shape.rawValue,
                format(ours.megabytesPerSecond, digits: 1), comparison.peer.rawValue,
                format(peer.megabytesPerSecond, digits: 1), format(ratio, digits: 2) + "×",
                comparison.target.map { "≥ " + format($0, digits: 1) + "×" } ?? "—", verdict.description,
            ]
        }
    }

    /// The binary plist size target: records bytes at most 40% of XML plist's.
    struct SizeRow {
        let shape: BenchmarkShape
        let binaryBytes: Int
        let xmlBytes: Int
        static let target = 0.40

        var share: Double { Double(binaryBytes) / Double(xmlBytes) }
        var verdict: String {
            guard shape == .records else { return "—" }
            return share <= Self.target
                ? "met" : "missed by \(format((share - Self.target) / Self.target * 100, digits: 0))%"
        }
        var cells: [String] {
            [
                shape.rawValue, String(binaryBytes), String(xmlBytes), format(share * 100, digits: 1) + "%",
                shape == .records ? "≤ 40%" : "—", verdict,
            ]
        }
    }

    var rows: [Row] = []
    var sizes: [SizeRow] = []
    let repetitions: Int

    static let headers = ["Codec", "Direction", "Shape", "Ours MB/s", "Peer", "Peer MB/s", "Ratio", "Target", "Verdict"]
    static let sizeHeaders = ["Shape", "Binary plist bytes", "XML plist bytes", "Binary / XML", "Target", "Verdict"]

    /// Aligned plain-text tables.
    func textTable() -> String {
        var text = Self.aligned([Self.headers] + rows.map(\.cells))
        text += "\nBinary plist size against XML plist\n"
        text += Self.aligned([Self.sizeHeaders] + sizes.map(\.cells))
        text += "\nMB/s are each side's own document bytes per second, best of \(repetitions) runs;"
        text += " ratio = peer time / our time on the same shape.\n"
        return text
    }

    /// GitHub-flavoured Markdown tables.
    func markdownTable() -> String {
        var text = Self.markdown([Self.headers] + rows.map(\.cells))
        text += "\nBinary plist size against XML plist:\n\n"
        text += Self.markdown([Self.sizeHeaders] + sizes.map(\.cells))
        text += "\nMB/s are each side's own document bytes per second, best of \(repetitions) runs;"
        text += " ratio = peer time / our time on the same shape (above 1: Anchorage is faster).\n"
        return text
    }

    private static func aligned(_ table: [[String]]) -> String {
        let widths = table[0].indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        return table.map { row in
            row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    private static func markdown(_ table: [[String]]) -> String {
        var lines = ["| " + table[0].joined(separator: " | ") + " |"]
        lines.append("|" + table[0].map { _ in " --- |" }.joined())
        for row in table.dropFirst() {
            lines.append("| " + row.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
