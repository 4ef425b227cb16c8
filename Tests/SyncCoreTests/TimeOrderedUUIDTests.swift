import Foundation
import SyncTesting
import Testing

@testable import SyncCore

@Suite("Time-ordered UUIDs: new record ids are version 7 and sort in the order they were made")
struct TimeOrderedUUIDTests {
    /// The 16 bytes of `uuid`.
    static func bytes(_ uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// The millisecond in the first 48 bits of `uuid`.
    static func milliseconds(_ uuid: UUID) -> UInt64 {
        bytes(uuid)[0..<6].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The count in the 12 bits after the version.
    static func counter(_ uuid: UUID) -> UInt16 {
        let bytes = bytes(uuid)
        return UInt16(bytes[6] & 0x0F) << 8 | UInt16(bytes[7])
    }

    @Test("ids made in a row are version 7 of the RFC 4122 variant, carry the time, and increase as strings in either case")
    func madeInARow() throws {
        let before = UInt64(Date().timeIntervalSince1970 * 1000)
        let ids = (0..<20_000).map { _ in TimeOrderedUUID.make() }
        let after = UInt64(Date().timeIntervalSince1970 * 1000)
        for id in ids {
            let bytes = Self.bytes(id)
            #expect(bytes[6] >> 4 == 7)
            #expect(bytes[8] >> 6 == 0b10)
            #expect(UUID(uuidString: id.uuidString) == id)
            // 20,000 ids in a few milliseconds use up no more than a few counts: they stay within the clock.
            #expect((before...after + 5).contains(Self.milliseconds(id)))
        }
        for (earlier, later) in zip(ids, ids.dropFirst()) {
            #expect(earlier.uuidString < later.uuidString)
            #expect(earlier.uuidString.lowercased() < later.uuidString.lowercased())
        }
        #expect(Set(ids).count == ids.count)
    }

    @Test("within one millisecond the count goes up from a random start below 2,048")
    func countWithinAMillisecond() {
        var generator = TimeOrderedUUID.Generator()
        var random = SeededGenerator(seed: 7)
        let first = generator.next(milliseconds: 1_000, using: &random)
        let second = generator.next(milliseconds: 1_000, using: &random)
        #expect(Self.counter(first) < 0x800)
        #expect(Self.counter(second) == Self.counter(first) + 1)
        #expect(Self.milliseconds(second) == 1_000)
        let later = generator.next(milliseconds: 1_001, using: &random)
        #expect(Self.milliseconds(later) == 1_001)
        #expect(Self.counter(later) < 0x800)
    }

    @Test("a clock that steps back or stands still past 4,096 ids carries the last millisecond on, so ids still increase")
    func clockStepsBackOrStandsStill() {
        var generator = TimeOrderedUUID.Generator()
        var random = SeededGenerator(seed: 8)
        var ids = [generator.next(milliseconds: 5_000, using: &random)]
        ids.append(generator.next(milliseconds: 4_000, using: &random))
        #expect(Self.milliseconds(ids[1]) == 5_000)
        // 4,097 ids at one millisecond: more than its 4,096 counts, fewer than two milliseconds' 2,049 each.
        for _ in 0..<4_095 { ids.append(generator.next(milliseconds: 5_000, using: &random)) }
        #expect(Self.milliseconds(ids.last!) == 5_001, "the count ran out once and moved the id to the next millisecond")
        for (earlier, later) in zip(ids, ids.dropFirst()) {
            #expect(earlier.uuidString < later.uuidString)
        }
    }
}
