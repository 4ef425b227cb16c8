/// Dates of the proleptic Gregorian calendar as days since 1970-01-01, and back
/// (Howard Hinnant's `days_from_civil` and `civil_from_days`): what the codecs,
/// WebDAV's and mail's date headers need, without a calendar object.
package enum CivilCalendar {
    /// The years a date header names (RFC 5322 mail dates, HTTP dates): four digits, from 1 to 9999.
    /// A header with another year is no date; a date outside them is written as the nearest end.
    package static let headerYears: ClosedRange<Int64> = 1...9_999
    /// Seconds since 1970 of the dates in ``headerYears``: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
    package static let headerSeconds: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

    /// Days since 1970-01-01 of `year`-`month` (1–12)-`day` (1–31).
    package static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year  // years start on March 1
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400  // 0...399
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1  // 0...365
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Year, month (1–12) and day (1–31) of a day counted from 1970-01-01.
    package static func date(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097  // 0...146096
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365  // 0...399
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // 0...365, from March 1
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0...11, March first
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
