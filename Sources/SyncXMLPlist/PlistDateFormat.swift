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
        out.reserve(20)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        appendDigits(year, count: 4, to: &out)
        out.appendUnchecked(UInt8(ascii: "-"))
        appendDigits(month, count: 2, to: &out)
        out.appendUnchecked(UInt8(ascii: "-"))
        appendDigits(day, count: 2, to: &out)
        out.appendUnchecked(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3_600, count: 2, to: &out)
        out.appendUnchecked(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, count: 2, to: &out)
        out.appendUnchecked(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, count: 2, to: &out)
        out.appendUnchecked(UInt8(ascii: "Z"))
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

    /// Appends `value` as exactly `count` digits; room for them must be reserved.
    @inline(__always)
    private static func appendDigits(_ value: Int64, count: Int, to out: inout ByteOutput) {
        var rest = value
        var position = out.count + count - 1
        while position >= out.count {
            out[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            position -= 1
        }
        out.advance(by: count)
    }

    private static func daysInMonth(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
