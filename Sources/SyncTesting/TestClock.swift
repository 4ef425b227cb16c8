#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SyncCore
import Synchronization

/// A `Clock` that moves only when the test tells it to: ``sleep(until:tolerance:)``
/// waits until ``advance(by:)`` moves the time to its deadline. It also keeps
/// a wall time, read through ``wall`` (a ``SyncCore/WallClock``) and set with
/// ``wallTime``, which advancing moves forward by the same amount.
///
/// ```swift
/// let clock = TestClock()
/// let retry = Task { try await clock.sleep(for: .seconds(30)); return "retried" }
/// await clock.waitForSleepers(1)      // the task is now asleep
/// clock.advance(by: .seconds(30))     // … and wakes up
/// #expect(try await retry.value == "retried")
/// ```
///
/// Hand ``wall`` to code that takes a ``SyncCore/WallClock``: `SyncCore`'s
/// `WallClock.now()` and `Clock.now` share a name, so one type cannot be both.
public final class TestClock: Clock, Sendable {
    /// A point on a ``TestClock``'s time line: the time since the clock was made.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// The time since the clock was made.
        public var offset: Duration

        /// Makes an instant `offset` after the clock was made.
        public init(offset: Duration) { self.offset = offset }

        /// This instant moved by `duration`.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }

        /// Orders instants in time.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }

        /// `+offset`.
        public var description: String { "+\(offset)" }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var wallTime: Date
        var nextSleeperID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var sleeperWaiters = CountWaiters()
    }

    private let state: Mutex<State>

    /// Makes a clock at ``Instant/offset`` zero whose wall time starts at `wallTime`.
    public init(wallTime: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Mutex(State(wallTime: wallTime))
    }

    /// The current instant: moved only by ``advance(by:)`` and ``advance(to:)``.
    public var now: Instant { state.withLock { $0.now } }

    /// Zero: the clock keeps every duration exactly.
    public var minimumResolution: Duration { .zero }

    /// The wall time ``wall`` reports. Setting it jumps the wall time (as a
    /// clock correction would) without waking sleepers; advancing moves it too.
    public var wallTime: Date {
        get { state.withLock { $0.wallTime } }
        set { state.withLock { $0.wallTime = newValue } }
    }

    /// This clock's wall time as a ``SyncCore/WallClock``.
    public var wall: TestWallClock { TestWallClock(clock: self) }

    /// How many tasks are asleep on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Waits until `deadline` is reached by ``advance(by:)`` or ``advance(to:)``;
    /// returns at once when it already has been.
    /// - Throws: `CancellationError` when the task is cancelled while asleep.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state in
            state.nextSleeperID += 1
            return state.nextSleeperID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome {
                    case asleep([CheckedContinuation<Void, Never>])
                    case due, cancelled
                }
                let outcome = state.withLock { state -> Outcome in
                    // A cancellation that came before this lock found no sleeper to wake.
                    if Task.isCancelled { return .cancelled }
                    if deadline <= state.now { return .due }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return .asleep(state.sleeperWaiters.takeReady(current: state.sleepers.count))
                }
                switch outcome {
                case .asleep(let waiters): for waiter in waiters { waiter.resume() }
                case .due: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the time forward by `duration` (a negative one does nothing) and
    /// wakes, earliest deadline first, every sleeper whose deadline it reaches.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            guard duration > .zero else { return [] }
            state.now = state.now.advanced(by: duration)
            state.wallTime += Self.seconds(duration)
            return Self.takeDue(&state)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves the time forward to `instant` (an earlier one does nothing) and
    /// wakes every sleeper whose deadline it reaches.
    public func advance(to instant: Instant) {
        advance(by: now.duration(to: instant))
    }

    /// Waits until at least `count` tasks are asleep on this clock: call it
    /// before ``advance(by:)`` so the advance reaches the sleep it is meant for.
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.sleeperWaiters.add(count, continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func takeDue(_ state: inout State) -> [Sleeper] {
        let now = state.now
        var due: [Sleeper] = []
        state.sleepers.removeAll { sleeper in
            guard sleeper.deadline <= now else { return false }
            due.append(sleeper)
            return true
        }
        return due.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// The wall time of a ``TestClock``, as a ``SyncCore/WallClock``.
///
/// ```swift
/// let clock = TestClock(wallTime: Date(timeIntervalSince1970: 1_700_000_000))
/// let wall: any WallClock = clock.wall      // hand this to the code under test
/// clock.wallTime = Date(timeIntervalSince1970: 1_800_000_000)
/// // wall.now() is now 1_800_000_000
/// ```
public struct TestWallClock: WallClock {
    /// The clock whose wall time this reports.
    public let clock: TestClock

    /// Makes a wall clock reading `clock`'s ``TestClock/wallTime``.
    public init(clock: TestClock) { self.clock = clock }

    /// The clock's ``TestClock/wallTime``.
    public func now() -> Date { clock.wallTime }
}
