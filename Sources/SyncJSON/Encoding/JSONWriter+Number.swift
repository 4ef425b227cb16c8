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

    /// Appends a finite real in the shortest form that reads back to the same
    /// `Double`, always recognisable as a real (`3.0`, `1e+300`, `5e-324`).
    /// - Throws: ``CodecError/Code/unsupportedValue`` for infinity and NaN.
    mutating func writeReal(_ value: Double) throws(CodecError) {
        guard value.isFinite else {
            throw .unsupportedValue("JSON cannot carry the non-finite real \(value)")
        }
        // `description` is the shortest round-trip form: digits, optional '.',
        // optional exponent with an explicit sign, all valid JSON.
        var text = value.description
        var looksReal = false
        text.withUTF8 { utf8 in
            looksReal = utf8.contains { $0 == JSONByte.dot || $0 == JSONByte.lowercaseE || $0 == JSONByte.uppercaseE }
            bytes.append(contentsOf: utf8)
        }
        if !looksReal { appendASCII(".0") }
    }
}
