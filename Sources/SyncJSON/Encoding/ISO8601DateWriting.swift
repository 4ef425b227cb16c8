#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Writes a date as an ISO 8601 UTC timestamp, `yyyy-MM-ddTHH:mm:ssZ`, with
/// `.S` to `.SSSSSS` (trailing zeros trimmed) only when the date has a
/// fraction of a second at microsecond resolution.
enum ISO8601DateWriting {
    /// Seconds from 1970 to 0000-01-01T00:00:00Z (proleptic Gregorian).
    private static let earliestSecond: Int64 = -62_167_219_200
    /// Seconds from 1970 to 9999-12-31T23:59:59Z.
    private static let latestSecond: Int64 = 253_402_300_799

    /// Appends the timestamp of `date` (without quotes).
    /// - Throws: ``CodecError/Code/unsupportedValue`` for a date outside the years 0000–9999.
    static func append(_ date: Date, to bytes: inout ByteOutput) throws(CodecError) {
        let interval = date.timeIntervalSince1970
        let wholeSeconds = interval.rounded(.down)
        guard wholeSeconds >= Double(earliestSecond), wholeSeconds <= Double(latestSecond) else {
            throw outOfRange(date)
        }
        var seconds = Int64(wholeSeconds)
        // `interval - wholeSeconds` is exact; round what is left to microseconds.
        var microseconds = Int64(((interval - wholeSeconds) * 1_000_000).rounded())
        if microseconds == 1_000_000 {
            seconds += 1
            microseconds = 0
        }
        if seconds > latestSecond { throw outOfRange(date) }

        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        bytes.reserve(27)

        appendDigits(year, count: 4, to: &bytes)
        bytes.appendUnchecked(JSONByte.minus)
        appendDigits(month, count: 2, to: &bytes)
        bytes.appendUnchecked(JSONByte.minus)
        appendDigits(day, count: 2, to: &bytes)
        bytes.appendUnchecked(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3_600, count: 2, to: &bytes)
        bytes.appendUnchecked(JSONByte.colon)
        appendDigits(secondOfDay % 3_600 / 60, count: 2, to: &bytes)
        bytes.appendUnchecked(JSONByte.colon)
        appendDigits(secondOfDay % 60, count: 2, to: &bytes)
        if microseconds > 0 {
            var digits = 6
            while microseconds % 10 == 0 {
                microseconds /= 10
                digits -= 1
            }
            bytes.appendUnchecked(JSONByte.dot)
            appendDigits(microseconds, count: digits, to: &bytes)
        }
        bytes.appendUnchecked(UInt8(ascii: "Z"))
    }

    /// The refusal of a date JSON cannot carry (NaN compares false, so it lands here too).
    private static func outOfRange(_ date: Date) -> CodecError {
        .unsupportedValue("JSON dates are ISO 8601 strings for the years 0000–9999, not \(CodecError.describing(date))")
    }

    /// `numerator / denominator` rounded toward negative infinity.
    private static func floorDivide(_ numerator: Int64, _ denominator: Int64) -> Int64 {
        let quotient = numerator / denominator
        return numerator % denominator < 0 ? quotient - 1 : quotient
    }

    /// Appends a non-negative number as exactly `count` decimal digits, zero-padded; room for them must
    /// be reserved.
    @inline(__always)
    private static func appendDigits(_ value: Int64, count: Int, to bytes: inout ByteOutput) {
        var remaining = value
        var position = bytes.count + count - 1
        while position >= bytes.count {
            bytes[position] = JSONByte.zero + UInt8(truncatingIfNeeded: remaining % 10)
            remaining /= 10
            position -= 1
        }
        bytes.advance(by: count)
    }
}
