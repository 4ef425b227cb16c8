import CompressNIO
import Foundation
import NIOCore
import SyncCore

/// Encodes a value in every codec and measures the bytes, the gzip bytes and the time each way.
struct SizeReport {
    /// One codec's numbers for one value.
    struct Row {
        var shape: String
        var codec: CodecChoice
        /// `nil` when the codec cannot carry the value; then ``refusal`` says why.
        var bytes: Int?
        var gzipBytes: Int?
        var encodeSeconds: Double?
        var decodeSeconds: Double?
        var refusal: String?
    }

    var rows: [Row] = []

    /// Measures `value` in every codec, keeping the best of `repetitions` timings.
    mutating func measure(_ value: SyncValue, shape: String, repetitions: Int) {
        measure(shape: shape, repetitions: repetitions) { _ in value }
    }

    /// Measures, in every codec, the value `valueFor` gives for that codec's features
    /// (a format-specific shape, such as a DeltaPack whose dates travel as strings in JSON).
    mutating func measure(shape: String, repetitions: Int, valueFor: (CodecFeatures) -> SyncValue) {
        for choice in CodecChoice.allCases {
            let codec = choice.codec
            let value = valueFor(codec.features)
            var row = Row(shape: shape, codec: choice)
            do {
                var encoded: [UInt8] = []
                row.encodeSeconds = try Self.best(of: repetitions) { encoded = try codec.encode(value) }
                row.bytes = encoded.count
                row.decodeSeconds = try Self.best(of: repetitions) { _ = try codec.decode(encoded) }
                row.gzipBytes = try Self.gzipSize(encoded)
            } catch {
                row.refusal = "\(error)"
            }
            rows.append(row)
        }
    }

    private static func best(of repetitions: Int, _ body: () throws -> Void) throws -> Double {
        var best = Double.infinity
        for _ in 0..<max(1, repetitions) {
            let start = ContinuousClock.now
            try body()
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            best = min(best, seconds)
        }
        return best
    }

    static func gzipSize(_ bytes: [UInt8]) throws -> Int {
        var buffer = ByteBuffer(bytes: bytes)
        return try buffer.compress(with: .gzip()).readableBytes
    }

    /// The size of `row` relative to the XML plist of the same shape, as a percentage.
    func ratioToXML(_ row: Row) -> Double? {
        guard let bytes = row.bytes,
            let xml = rows.first(where: { $0.shape == row.shape && $0.codec == .xmlPlist })?.bytes, xml > 0
        else { return nil }
        return Double(bytes) / Double(xml) * 100
    }

    /// The report as a Markdown table.
    func markdownTable() -> String {
        var lines = [
            "| shape | codec | bytes | gzip bytes | vs XML plist | encode | decode |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for row in rows {
            guard let bytes = row.bytes else {
                lines.append("| \(row.shape) | \(row.codec.rawValue) | cannot carry it: \(row.refusal ?? "") | | | | |")
                continue
            }
            lines.append(
                "| \(row.shape) | \(row.codec.rawValue) | \(Self.grouped(bytes)) | \(row.gzipBytes.map(Self.grouped) ?? "–") | "
                    + "\(ratioToXML(row).map { String(format: "%.1f%%", $0) } ?? "–") | "
                    + "\(row.encodeSeconds.map(Self.milliseconds) ?? "–") | \(row.decodeSeconds.map(Self.milliseconds) ?? "–") |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as an aligned text table for a terminal.
    func textTable() -> String {
        var lines = [
            "shape".padding(toLength: 10, withPad: " ", startingAt: 0) + "codec".padding(toLength: 14, withPad: " ", startingAt: 0)
                + "bytes".leftPadded(12) + "gzip".leftPadded(12) + "vs XML".leftPadded(9) + "encode".leftPadded(11)
                + "decode".leftPadded(11)
        ]
        for row in rows {
            var line = row.shape.padding(toLength: 10, withPad: " ", startingAt: 0)
                + row.codec.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)
            if let bytes = row.bytes {
                line += String(bytes).leftPadded(12) + (row.gzipBytes.map(String.init) ?? "–").leftPadded(12)
                line += (ratioToXML(row).map { String(format: "%.1f%%", $0) } ?? "–").leftPadded(9)
                line += (row.encodeSeconds.map(Self.milliseconds) ?? "–").leftPadded(11)
                line += (row.decodeSeconds.map(Self.milliseconds) ?? "–").leftPadded(11)
            } else {
                line += "  cannot carry it: \(row.refusal ?? "")"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }

    static func grouped(_ number: Int) -> String {
        let digits = Array(String(number))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text += "," }
            text.append(digit)
        }
        return text
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}
