import SyncCore

/// The `yyyy-MM-ddTHH:mm:ssZ` form of XML property list dates, converted to and
/// from whole seconds since 1970 without Foundation formatters.
enum PlistDateFormat {
    /// The first second that has a four-digit year: 0000-01-01T00:00:00Z.
    static let earliestSecond: Int64 = -62_167_219_200
    /// The last second that has a four-digit year: 9999-12-31T23:59:59Z.
    static let latestSecond: Int64 = 253_402_300_799

    /// The 20 bytes of `seconds` (which must lie in `earliestSecond...latestSecond`).
    static func append(seconds: Int64, to out: inout ByteOutput) {
        out.appendISO8601DateTime(seconds: seconds)
        out.append(UInt8(ascii: "Z"))
    }

    /// The seconds since 1970 that `text` names, or `nil` when it is not exactly
    /// `yyyy-MM-ddTHH:mm:ssZ` with a valid calendar date and time.
    static func seconds(parsing text: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard text.count == 20,
            text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"), text[19] == UInt8(ascii: "Z"),
            let year = digits(text, 0, 4), let month = digits(text, 5, 2), let day = digits(text, 8, 2),
            let hour = digits(text, 11, 2), let minute = digits(text, 14, 2), let second = digits(text, 17, 2),
            (1...12).contains(month), day >= 1, day <= daysInMonth(month, of: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        return CivilCalendar.days(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
    }

    private static func digits(_ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for index in start..<start + count {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
        }
        return value
    }

    private static func daysInMonth(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
