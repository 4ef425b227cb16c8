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

        bytes.appendISO8601DateTime(seconds: seconds)
        if microseconds > 0 {
            var digits = 6
            while microseconds % 10 == 0 {
                microseconds /= 10
                digits -= 1
            }
            bytes.append(JSONByte.dot)
            bytes.appendDigits(microseconds, count: digits)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The refusal of a date JSON cannot carry (NaN compares false, so it lands here too).
    private static func outOfRange(_ date: Date) -> CodecError {
        .unsupportedValue("JSON dates are ISO 8601 strings for the years 0000–9999, not \(CodecError.describing(date))")
    }
}
