#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Converts between `Date` and the MessagePack timestamp extension's seconds
/// since 1970 and nanoseconds.
///
/// A `Date` is a `Double` count of seconds since 2001; a timestamp is whole
/// seconds since 1970 plus nanoseconds in `0 ..< 10^9` (the seconds are the
/// floor, so the nanoseconds of a date before 1970 still count forward).
enum MessagePackTimestamp {
    /// Seconds from 1970-01-01 to 2001-01-01, the epoch of `Date`.
    static let secondsFrom1970To2001: Int64 = 978_307_200

    /// The largest magnitude of seconds since 1970 accepted either way
    /// (2^52 s, about 142 million years), so that the seconds convert to a
    /// `Double` exactly.
    static let maxSeconds: Int64 = 1 << 52

    /// The date a timestamp stands for, to the precision of `Date`; `nil` when
    /// the seconds are beyond ``maxSeconds``, or when rounding to `Date`'s
    /// precision carries the date past them (so every date read can be written).
    @inline(__always)
    static func date(seconds: Int64, nanoseconds: UInt32) -> Date? {
        guard seconds >= -maxSeconds && seconds <= maxSeconds else { return nil }
        let whole = Double(seconds - secondsFrom1970To2001)
        if nanoseconds == 0 { return Date(timeIntervalSinceReferenceDate: whole) }
        let interval = whole + Double(nanoseconds) / 1e9
        let wholeSince1970 = interval.rounded(.down) + Double(secondsFrom1970To2001)
        guard wholeSince1970 >= -Double(maxSeconds) && wholeSince1970 <= Double(maxSeconds) else { return nil }
        return Date(timeIntervalSinceReferenceDate: interval)
    }

    /// The timestamp that reads back as exactly `date`, or `nil` when there is
    /// none: a non-finite date, one beyond ``maxSeconds``, or one with more
    /// precision than whole nanoseconds carry (near 2001, where a `Double`
    /// holds fractions finer than a nanosecond).
    static func parts(of date: Date) -> (seconds: Int64, nanoseconds: UInt32)? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite else { return nil }
        let floor = interval.rounded(.down)
        guard let wholeSince2001 = Int64(exactly: floor) else { return nil }
        let (seconds, overflow) = wholeSince2001.addingReportingOverflow(secondsFrom1970To2001)
        guard !overflow, seconds >= -maxSeconds, seconds <= maxSeconds else { return nil }
        let fraction = interval - floor  // exact: both lie within one second of each other
        if fraction == 0 { return (seconds, 0) }
        // The nearest whole nanosecond almost always reads back as `date`; the
        // two beside it cover the rounding of the read-back's own arithmetic.
        let nearest = Int64((fraction * 1e9).rounded())
        for candidate in [nearest, nearest - 1, nearest + 1] where candidate >= 0 && candidate <= 1_000_000_000 {
            let (carriedSeconds, nanoseconds) =
                candidate == 1_000_000_000 ? (seconds + 1, UInt32(0)) : (seconds, UInt32(candidate))
            if let back = self.date(seconds: carriedSeconds, nanoseconds: nanoseconds),
                back.timeIntervalSinceReferenceDate == interval
            {
                return (carriedSeconds, nanoseconds)
            }
        }
        return nil
    }
}
