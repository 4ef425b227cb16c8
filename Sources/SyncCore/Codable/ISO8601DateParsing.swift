#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads an ISO 8601 / RFC 3339 date-time string, the form JSON carries dates in:
/// `yyyy-MM-ddTHH:mm:ss`, an optional fraction of a second (`.` or `,`, any
/// number of digits), then `Z` or an offset `±HH:mm`, `±HHmm` or `±HH`.
/// `T` may also be `t` or a space. Years are 0000–9999 (proleptic Gregorian).
enum ISO8601DateParsing {
    /// The date, or `nil` when `string` is not such a timestamp or names an impossible time.
    static func date(from string: String) -> Date? {
        var string = string
        return string.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            return reader.readDate()
        }
    }

    /// Days from 1970-01-01 to a civil date (Howard Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func readDate() -> Date? {
            guard let year = digits(4), expect(UInt8(ascii: "-")),
                let month = digits(2), expect(UInt8(ascii: "-")),
                let day = digits(2),
                expect(UInt8(ascii: "T")) || expect(UInt8(ascii: "t")) || expect(UInt8(ascii: " ")),
                let hour = digits(2), expect(UInt8(ascii: ":")),
                let minute = digits(2), expect(UInt8(ascii: ":")),
                let second = digits(2)
            else { return nil }
            guard (1...12).contains(month), (1...daysInMonth(month, year: year)).contains(day),
                hour < 24, minute < 60, second < 60
            else { return nil }

            var fraction = 0.0
            if expect(UInt8(ascii: ".")) || expect(UInt8(ascii: ",")) {
                var numerator: Int64 = 0
                var denominator: Int64 = 1
                var count = 0
                while let digit = digit() {
                    if denominator < 1_000_000_000 {
                        numerator = numerator * 10 + digit
                        denominator *= 10
                    }
                    count += 1
                }
                guard count > 0 else { return nil }
                fraction = Double(numerator) / Double(denominator)
            }

            guard let offset = readOffset(), index == bytes.count else { return nil }
            let days = ISO8601DateParsing.daysSince1970(year: year, month: month, day: day)
            let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset
            return Date(timeIntervalSince1970: Double(seconds) + fraction)
        }

        /// The zone offset in seconds east of UTC.
        mutating func readOffset() -> Int64? {
            if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) { return 0 }
            let sign: Int64
            if expect(UInt8(ascii: "+")) {
                sign = 1
            } else if expect(UInt8(ascii: "-")) {
                sign = -1
            } else {
                return nil
            }
            guard let hours = digits(2), hours < 24 else { return nil }
            var minutes: Int64 = 0
            if index < bytes.count {
                _ = expect(UInt8(ascii: ":"))
                guard let value = digits(2), value < 60 else { return nil }
                minutes = value
            }
            return sign * (hours * 3_600 + minutes * 60)
        }

        mutating func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func digit() -> Int64? {
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            index += 1
            return Int64(byte - UInt8(ascii: "0"))
        }

        mutating func digits(_ count: Int) -> Int64? {
            var value: Int64 = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }
    }
}
