import SyncCore

extension JSONWriter {
    /// Appends a signed integer in decimal.
    @inline(__always)
    mutating func writeInteger(_ value: Int64) {
        if value < 0 { output.append(JSONByte.minus) }
        output.appendDecimal(value.magnitude)
    }

    /// Appends a finite real with the fewest digits that read back to the same
    /// `Double`, always recognisable as a real: positional from 1e-4 up to
    /// 1e16 (`0.0001`, `3.0`, `9007199254740994.0`), with an exponent outside
    /// that (`1e-05`, `1e+16`, `5e-324`) — the layout of Python's `repr`.
    /// - Throws: ``CodecError/Code/unsupportedValue`` for infinity and NaN.
    mutating func writeReal(_ value: Double) throws(CodecError) {
        guard value.isFinite else {
            throw .unsupportedValue("JSON cannot carry the non-finite real \(value)")
        }
        // The standard library's text for a finite `Double` has the fewest
        // digits that read back exactly: digits, a '.', or an exponent with an
        // explicit sign, all valid JSON. Written through a stream, it arrives
        // as bytes without becoming a `String` first.
        let start = output.count
        var sink = RealTextSink(output: output)
        value.write(to: &sink)
        output = sink.output
        if !sink.looksReal {
            appendASCII(".0")
        } else if output.count - start >= 5, endsWithExponent15() {
            expandExponent15(from: start)
        }
    }

    /// Whether the output ends with `e+15`.
    private func endsWithExponent15() -> Bool {
        let end = output.count
        return output[end - 4] == JSONByte.lowercaseE && output[end - 3] == JSONByte.plus
            && output[end - 2] == UInt8(ascii: "1") && output[end - 1] == UInt8(ascii: "5")
    }

    /// Rewrites `d.ddde+15` (which the standard library uses from 2^53 on) as
    /// the 16-digit integer it is, followed by `.0`, as for the other reals below 1e16.
    private mutating func expandExponent15(from start: Int) {
        var digits: [UInt8] = []
        digits.reserveCapacity(16)
        let negative = output[start] == JSONByte.minus
        for position in (negative ? start + 1 : start)..<(output.count - 4) where output[position] != JSONByte.dot {
            digits.append(output[position])
        }
        // Every double from 2^53 up is an integer, so there are at most 16 digits.
        guard digits.count <= 16 else { return }
        output.truncate(to: negative ? start + 1 : start)
        digits.withUnsafeBufferPointer { output.append(contentsOf: $0) }
        output.reserve(16 - digits.count)
        for _ in digits.count..<16 { output.appendUnchecked(JSONByte.zero) }
        appendASCII(".0")
    }
}

/// Receives the text of a `Double` and appends it to the output bytes.
private struct RealTextSink: TextOutputStream {
    /// The output, with the number's text appended.
    var output: ByteOutput
    /// Whether the text had a '.' or an exponent.
    var looksReal = false

    /// Appends text that came as a `String`.
    mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { append($0) }
    }

    /// Appends ASCII text straight from the standard library's number formatter,
    /// which calls this (when it exists) instead of building a `String`.
    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        append(buffer)
    }

    private mutating func append(_ text: UnsafeBufferPointer<UInt8>) {
        for byte in text where byte == JSONByte.dot || byte == JSONByte.lowercaseE || byte == JSONByte.uppercaseE {
            looksReal = true
        }
        output.append(contentsOf: text)
    }
}
