import Foundation

/// Draws a ``SizeReport`` as an SVG bar chart: for each shape, one pair of bars per codec (encoded and gzip bytes).
enum SizeChart {
    static func svg(_ report: SizeReport) -> String {
        let shapes = report.rows.reduce(into: [String]()) { if !$0.contains($1.shape) { $0.append($1.shape) } }
        let barHeight = 14.0
        let gap = 6.0
        let labelWidth = 190.0
        let plotWidth = 520.0
        let rowsPerShape = Double(CodecChoice.allCases.count)
        let shapeHeight = rowsPerShape * (2 * barHeight + gap) + 30
        let height = Double(shapes.count) * shapeHeight + 50
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(labelWidth + plotWidth + 120))" height="\(Int(height))" \
            font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="20" font-size="14" font-weight="bold">Encoded size by codec (bytes; lighter bar: gzip)</text>

            """
        var y = 40.0
        for shape in shapes {
            let rows = report.rows.filter { $0.shape == shape }
            let largest = Double(rows.compactMap(\.bytes).max() ?? 1)
            svg += "<text x=\"10\" y=\"\(y + 12)\" font-weight=\"bold\">\(shape)</text>\n"
            y += 20
            for row in rows {
                svg += "<text x=\"20\" y=\"\(y + barHeight - 3)\">\(row.codec.rawValue)</text>\n"
                if let bytes = row.bytes {
                    let width = plotWidth * Double(bytes) / largest
                    svg += "<rect x=\"\(labelWidth)\" y=\"\(y)\" width=\"\(format(width))\" height=\"\(barHeight)\" fill=\"#2a6fb0\"/>\n"
                    svg += "<text x=\"\(format(labelWidth + width + 5))\" y=\"\(y + barHeight - 3)\">\(SizeReport.grouped(bytes))</text>\n"
                    if let gzip = row.gzipBytes {
                        let gzipWidth = plotWidth * Double(gzip) / largest
                        svg += "<rect x=\"\(labelWidth)\" y=\"\(y + barHeight)\" width=\"\(format(gzipWidth))\" height=\"\(barHeight)\" fill=\"#9cc3e6\"/>\n"
                        svg += "<text x=\"\(format(labelWidth + gzipWidth + 5))\" y=\"\(y + 2 * barHeight - 3)\" fill=\"#555\">\(SizeReport.grouped(gzip))</text>\n"
                    }
                } else {
                    svg += "<text x=\"\(labelWidth)\" y=\"\(y + barHeight - 3)\" fill=\"#a00\">cannot carry this value</text>\n"
                }
                y += 2 * barHeight + gap
            }
            y += 10
        }
        return svg + "</svg>\n"
    }

    private static func format(_ number: Double) -> String { String(format: "%.1f", number) }
}
