import FoundationEssentials
import SyncCore
import SyncTesting
import Synchronization
import Testing

@Suite("TestClock moves only when the test advances it")
struct TestClockTests {
    @Test func sleepResumesOnlyAfterAdvance() async throws {
        let clock = TestClock()
        let woke = Flag()
        let sleeper = Task {
            try await clock.sleep(for: .seconds(5))
            woke.set()
            return clock.now
        }
        await clock.waitForSleepers(1)
        #expect(!woke.isSet)
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1)
        #expect(!woke.isSet)
        clock.advance(by: .seconds(1))
        let wokeAt = try await sleeper.value
        #expect(woke.isSet)
        #expect(wokeAt == TestClock.Instant(offset: .seconds(5)))
        #expect(clock.sleeperCount == 0)
    }

    @Test func sleepersWakeInDeadlineOrderAndOnlyWhenDue() async throws {
        let clock = TestClock()
        let late = Task { try await clock.sleep(for: .seconds(10)) }
        let early = Task { try await clock.sleep(for: .seconds(2)) }
        await clock.waitForSleepers(2)
        clock.advance(to: TestClock.Instant(offset: .seconds(3)))
        try await early.value
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(7))
        try await late.value
        #expect(clock.now.offset == .seconds(10))
    }

    @Test func pastDeadlineReturnsAtOnce() async throws {
        let clock = TestClock()
        clock.advance(by: .seconds(1))
        try await clock.sleep(until: TestClock.Instant(offset: .milliseconds(500)), tolerance: nil)
        try await clock.sleep(for: .zero)
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancelledSleepThrows() async throws {
        let clock = TestClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func timeNeverMovesBackwards() {
        let clock = TestClock()
        clock.advance(by: .seconds(3))
        clock.advance(by: .seconds(-2))
        clock.advance(to: TestClock.Instant(offset: .seconds(1)))
        #expect(clock.now.offset == .seconds(3))
    }

    @Test func wallClockIsSettableAndMovesWithAdvance() {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let clock = TestClock(wallTime: start)
        let wall: any WallClock = clock.wall
        #expect(wall.now() == start)
        clock.advance(by: .milliseconds(1_500))
        #expect(wall.now() == Date(timeIntervalSince1970: 1_700_000_001.5))
        clock.wallTime = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(wall.now() == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(clock.now.offset == .milliseconds(1_500))
    }

    @Test func instantsMeasureDurations() {
        let earlier = TestClock.Instant(offset: .seconds(2))
        let later = earlier.advanced(by: .seconds(3))
        #expect(earlier.duration(to: later) == .seconds(3))
        #expect(earlier < later)
    }
}

/// A flag one task sets and the test reads.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
