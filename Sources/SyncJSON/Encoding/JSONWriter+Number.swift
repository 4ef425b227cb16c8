import SyncCore

extension JSONWriter {
    /// Appends a signed integer in decimal.
    mutating func writeInteger(_ value: Int64) {
        if value < 0 { bytes.append(JSONByte.minus) }
        writeUnsigned(value.magnitude)
    }

    /// Appends an unsigned integer in decimal, without going through `String`.
    mutating func writeUnsigned(_ value: UInt64) {
        var digitCount = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digitCount += 1
        }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(JSONByte.zero, count: digitCount))
        var remaining = value
        var position = start + digitCount - 1
        while remaining >= 10 {
            let (quotient, remainder) = remaining.quotientAndRemainder(dividingBy: 10)
            bytes[position] = JSONByte.zero + UInt8(remainder)
            remaining = quotient
            position -= 1
        }
        bytes[position] = JSONByte.zero + UInt8(remaining)
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
        let start = bytes.count
        var sink = RealTextSink(bytes: bytes)
        bytes = []
        value.write(to: &sink)
        bytes = sink.bytes
        if !sink.looksReal {
            appendASCII(".0")
        } else if bytes.count - start >= 5, bytes[(bytes.count - 4)...].elementsEqual("e+15".utf8) {
            expandExponent15(from: start)
        }
    }

    /// Rewrites `d.ddde+15` (which the standard library uses from 2^53 on) as
    /// the 16-digit integer it is, followed by `.0`, as for the other reals below 1e16.
    private mutating func expandExponent15(from start: Int) {
        var digits: [UInt8] = []
        digits.reserveCapacity(16)
        let negative = bytes[start] == JSONByte.minus
        for byte in bytes[(negative ? start + 1 : start)..<(bytes.count - 4)] where byte != JSONByte.dot {
            digits.append(byte)
        }
        // Every double from 2^53 up is an integer, so there are at most 16 digits.
        guard digits.count <= 16 else { return }
        bytes.removeSubrange((negative ? start + 1 : start)...)
        bytes.append(contentsOf: digits)
        bytes.append(contentsOf: repeatElement(JSONByte.zero, count: 16 - digits.count))
        appendASCII(".0")
    }
}

/// Receives the text of a `Double` and appends it to the output bytes.
private struct RealTextSink: TextOutputStream {
    /// The output, with the number's text appended.
    var bytes: [UInt8]
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
        bytes.append(contentsOf: text)
    }
}
