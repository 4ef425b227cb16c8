#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads appSync timestamps: ISO 8601 with a zone, and the seed's `2014-03-20 13:15:00 CET` form.
enum AppSyncTimestamp {
    /// Offsets of the zone abbreviations the seed's form may carry, in hours.
    private static let zones: [String: Int] = [
        "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 1, "CET": 1, "CEST": 2, "EET": 2, "EEST": 3, "EST": -5,
        "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
    ]

    static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        // "YYYY-MM-DD HH:MM:SS ZONE"
        let parts = text.split(separator: " ")
        guard parts.count == 3, let offset = zones[String(parts[2]).uppercased()] else { return nil }
        let day = parts[0].split(separator: "-").compactMap { Int($0) }
        let time = parts[1].split(separator: ":").compactMap { Int($0) }
        guard day.count == 3, time.count == 3, (1...12).contains(day[1]), (1...31).contains(day[2]),
            (0...23).contains(time[0]), (0...59).contains(time[1]), (0...60).contains(time[2])
        else { return nil }
        let days = daysSince1970(year: day[0], month: day[1], day: day[2])
        let seconds = days * 86_400 + time[0] * 3_600 + time[1] * 60 + time[2] - offset * 3_600
        return Date(timeIntervalSince1970: Double(seconds))
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date.
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
