/// The `yyyy-MM-ddTHH:mm:ssZ` form of XML property list dates, converted to and
/// from whole seconds since 1970 without Foundation formatters.
enum PlistDateFormat {
    /// The first second that has a four-digit year: 0000-01-01T00:00:00Z.
    static let earliestSecond: Int64 = -62_167_219_200
    /// The last second that has a four-digit year: 9999-12-31T23:59:59Z.
    static let latestSecond: Int64 = 253_402_300_799

    /// The 20 bytes of `seconds` (which must lie in `earliestSecond...latestSecond`).
    static func append(seconds: Int64, to out: inout [UInt8]) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        appendDigits(year, count: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(month, count: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(day, count: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3_600, count: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, count: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, count: 2, to: &out)
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
        return days(fromCivil: year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
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

    private static func appendDigits(_ value: Int64, count: Int, to out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    private static func daysInMonth(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01.
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
