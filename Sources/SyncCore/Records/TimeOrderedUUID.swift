#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Synchronization

/// New ids for records: UUIDs of version 7 (RFC 9562), which begin with the time they were made, so
/// that ids made one after another sort one after another.
///
/// A store keeps its records in a B-tree ordered by id. Random ids (version 4) land on random pages,
/// so writing many new records dirties a page per record in every index by id, the journal's
/// included; ids in time order land at the end, so a batch of new records fills a few pages in turn.
/// They are ordinary UUIDs to everything that reads them: the stacks check the form, never the version.
///
/// ```swift
/// let gid = TimeOrderedUUID.makeID()   // a new Aquasync gid: make().uuidString.lowercased()
/// ```
///
/// The first 48 bits are the Unix time in milliseconds; the next 12 (after the version) count the ids
/// made within one millisecond, starting from a random value below 2,048, so the ids one process makes
/// always increase — when the clock stands still or steps back too, the last millisecond is carried
/// on; the last 62 bits are random.
public enum TimeOrderedUUID {
    /// The generator the whole process shares, so that its ids increase across callers.
    private static let shared = Mutex(Generator())

    /// A new UUID of version 7, greater than every one this process made before.
    public static func make() -> UUID {
        let now = Date().timeIntervalSince1970 * 1000
        return shared.withLock { $0.next(milliseconds: now > 0 ? UInt64(now) : 0) }
    }

    /// A new id as the stacks spell one — Aquasync's gid, appSync's guid: ``make()`` in lowercase text.
    public static func makeID() -> String {
        make().uuidString.lowercased()
    }

    /// The state between two ids: the millisecond and count of the last one.
    struct Generator: Sendable {
        /// The millisecond of the last id made.
        private(set) var milliseconds: UInt64 = 0
        /// The count of the last id made within `milliseconds`.
        private(set) var counter: UInt16 = 0

        /// The count field's largest value: 12 bits.
        static let maximumCounter: UInt16 = 0xFFF

        /// The next id, at `now` — or, when the clock has not moved past the last id's millisecond, at
        /// that millisecond with the next count (the next millisecond when the count is used up).
        mutating func next<Random: RandomNumberGenerator>(milliseconds now: UInt64, using random: inout Random) -> UUID {
            if now > milliseconds {
                milliseconds = now
                counter = UInt16.random(in: 0..<0x800, using: &random)
            } else if counter < Self.maximumCounter {
                counter += 1
            } else {
                milliseconds += 1
                counter = UInt16.random(in: 0..<0x800, using: &random)
            }
            let tail = UInt64.random(in: 0...UInt64.max, using: &random)
            let time = milliseconds & 0xFFFF_FFFF_FFFF
            return UUID(uuid: (
                UInt8(truncatingIfNeeded: time >> 40), UInt8(truncatingIfNeeded: time >> 32),
                UInt8(truncatingIfNeeded: time >> 24), UInt8(truncatingIfNeeded: time >> 16),
                UInt8(truncatingIfNeeded: time >> 8), UInt8(truncatingIfNeeded: time),
                0x70 | UInt8(counter >> 8), UInt8(truncatingIfNeeded: counter),
                0x80 | UInt8(truncatingIfNeeded: tail >> 58), UInt8(truncatingIfNeeded: tail >> 48),
                UInt8(truncatingIfNeeded: tail >> 40), UInt8(truncatingIfNeeded: tail >> 32),
                UInt8(truncatingIfNeeded: tail >> 24), UInt8(truncatingIfNeeded: tail >> 16),
                UInt8(truncatingIfNeeded: tail >> 8), UInt8(truncatingIfNeeded: tail)))
        }

        /// The next id, at `now`, with the system's random numbers.
        mutating func next(milliseconds now: UInt64) -> UUID {
            var random = SystemRandomNumberGenerator()
            return next(milliseconds: now, using: &random)
        }
    }
}
