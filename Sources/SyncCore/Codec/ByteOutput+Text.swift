/// Numbers, dates and base64 as text, shared by the text codecs' writers.
extension ByteOutput {
    /// Appends `seconds` since 1970 as `YYYY-MM-DDTHH:MM:SS` (UTC, proleptic Gregorian), the part of an
    /// ISO 8601 timestamp before any fraction and the `Z`; `seconds` must lie in the years 0000–9999.
    public mutating func appendISO8601DateTime(seconds: Int64) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        reserve(19)
        appendDigits(year, count: 4)
        appendUnchecked(UInt8(ascii: "-"))
        appendDigits(month, count: 2)
        appendUnchecked(UInt8(ascii: "-"))
        appendDigits(day, count: 2)
        appendUnchecked(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3_600, count: 2)
        appendUnchecked(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, count: 2)
        appendUnchecked(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, count: 2)
    }

    /// Appends the non-negative `value` as exactly `count` decimal digits, zero-padded.
    @inlinable
    public mutating func appendDigits(_ value: Int64, count digitCount: Int) {
        reserve(digitCount)
        var rest = value
        var position = count + digitCount - 1
        while position >= count {
            self[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            position -= 1
        }
        advance(by: digitCount)
    }

    /// Appends the decimal digits of `value`.
    @inlinable
    public mutating func appendDecimal(_ value: UInt64) {
        var digitCount = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digitCount += 1
        }
        reserve(digitCount)
        var remaining = value
        var position = count + digitCount - 1
        while remaining >= 10 {
            let (quotient, remainder) = remaining.quotientAndRemainder(dividingBy: 10)
            self[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: remainder)
            remaining = quotient
            position -= 1
        }
        self[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: remaining)
        advance(by: digitCount)
    }

    /// Appends the standard base64 (RFC 4648 §4, `+` and `/`, with `=` padding) of `data`, on one line.
    @inlinable
    public mutating func appendBase64(_ data: UnsafeBufferPointer<UInt8>) {
        let length = data.count
        guard length > 0, let source = data.baseAddress else { return }
        let size = (length + 2) / 3 * 4
        reserve(size)
        var target = UnsafeMutableRawPointer(start + count)
        Base64Table.pairs.withUnsafeBufferPointer { pairs in
            var index = 0
            while index + 3 <= length {
                let triple = Int(source[index]) << 16 | Int(source[index + 1]) << 8 | Int(source[index + 2])
                target.storeBytes(of: pairs[triple >> 12], as: UInt16.self)
                target.storeBytes(of: pairs[triple & 0xFFF], toByteOffset: 2, as: UInt16.self)
                target += 4
                index += 3
            }
            if index < length {
                // The last one or two bytes, padded with `=`.
                let twoLeft = index + 1 < length
                let triple = Int(source[index]) << 16 | (twoLeft ? Int(source[index + 1]) << 8 : 0)
                target.storeBytes(of: pairs[triple >> 12], as: UInt16.self)
                target.storeBytes(
                    of: twoLeft ? Base64Table.alphabet[triple >> 6 & 0x3F] : UInt8(ascii: "="), toByteOffset: 2, as: UInt8.self)
                target.storeBytes(of: UInt8(ascii: "="), toByteOffset: 3, as: UInt8.self)
            }
        }
        advance(by: size)
    }
}

/// The base64 alphabet, and its characters in pairs for every 12 bits.
@usableFromInline
enum Base64Table {
    @usableFromInline
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Pairs of base64 characters for every 12 bits, in the byte order of memory: encoding three bytes
    /// is two lookups and two stores.
    @usableFromInline
    static let pairs: [UInt16] = (0..<4096).map { bits in
        (UInt16(alphabet[bits >> 6]) | UInt16(alphabet[bits & 0x3F]) << 8).littleEndian
    }
}
