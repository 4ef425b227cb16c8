#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Synchronization

/// What a server did in each of the last minutes, a second at a time: requests, syncs, errors, the
/// 50th and 99th percentile of the syncs' durations, and a gauge (open push connections) — what the
/// operator console draws.
///
/// The responder records every request it counts (``record(stack:status:duration:)``); recording is a
/// lock and a few additions, so it costs a busy server nothing it would notice. Durations go into a
/// histogram of buckets 10 % apart, so a percentile is exact to within 10 %.
///
/// ```swift
/// let history = LoadHistory()
/// let server = HTTPSyncServer(service: router, authenticator: users,
///                             observability: ServerObservability(loadHistory: history))
/// let lastMinute = history.samples(last: 60)
/// ```
public final class LoadHistory: Sendable {
    /// One second of the history.
    public struct Sample: Sendable, Hashable {
        /// The second's start.
        public var time: Date
        /// Requests answered in that second (all paths but the probes).
        public var requests: Int
        /// Requests to a sync stack (``ServerObservability/stacks``) among them.
        public var syncs: Int
        /// Requests answered with a status of 500 or more among them.
        public var errors: Int
        /// The median duration of the second's syncs in milliseconds; `nil` when there were none.
        public var p50: Double?
        /// The 99th percentile of the second's sync durations in milliseconds; `nil` when there were none.
        public var p99: Double?
        /// The gauge's value in that second (``note(gauge:)``), `nil` when nobody set it.
        public var gauge: Int?
    }

    /// The seconds kept.
    public let capacity: Int
    private let slots: Mutex<[Slot]>
    private let now: @Sendable () -> Date

    /// The stacks counted as syncs: the values of ``ServerObservability/standardStacks``.
    private let syncStacks: Set<String>

    /// Makes an empty history of the last `capacity` seconds.
    /// - Parameters:
    ///   - capacity: The seconds kept; 300 (five minutes) by default.
    ///   - syncStacks: The stack names whose requests count as syncs.
    ///   - now: The wall clock (a fixed one in tests).
    public init(
        capacity: Int = 300, syncStacks: Set<String> = Set(ServerObservability.standardStacks.values),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        precondition(capacity > 0, "a history keeps at least one second")
        self.capacity = capacity
        self.syncStacks = syncStacks
        self.now = now
        self.slots = Mutex(Array(repeating: Slot(), count: capacity))
    }

    /// Counts one answered request of `stack` with `status`, which took `duration`.
    public func record(stack: String, status: Int, duration: Duration) {
        let second = Self.second(of: now())
        let milliseconds = Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
        let bucket = Self.bucket(milliseconds: milliseconds)
        let isSync = syncStacks.contains(stack)
        slots.withLock { slots in
            let index = Int(second.remainderReportingOverflow(dividingBy: Int64(capacity)).partialValue.magnitude)
            if slots[index].second != second { slots[index] = Slot(second: second) }
            slots[index].requests += 1
            if status >= 500 { slots[index].errors += 1 }
            if isSync {
                slots[index].syncs += 1
                slots[index].durations[bucket, default: 0] += 1
            }
        }
    }

    /// Sets the gauge for the current second (the last value set in a second is kept).
    public func note(gauge value: Int) {
        let second = Self.second(of: now())
        slots.withLock { slots in
            let index = Int(second.remainderReportingOverflow(dividingBy: Int64(capacity)).partialValue.magnitude)
            if slots[index].second != second { slots[index] = Slot(second: second) }
            slots[index].gauge = value
        }
    }

    /// The last `count` seconds (at most ``capacity``), oldest first, ending with the current one;
    /// a second without requests has zeros.
    public func samples(last count: Int? = nil) -> [Sample] {
        let seconds = min(count ?? capacity, capacity)
        let current = Self.second(of: now())
        let copy = slots.withLock { $0 }
        return (0..<seconds).reversed().map { back in
            let second = current - Int64(back)
            let index = Int(second.remainderReportingOverflow(dividingBy: Int64(capacity)).partialValue.magnitude)
            let slot = copy[index].second == second ? copy[index] : Slot(second: second)
            return Sample(
                time: Date(timeIntervalSince1970: Double(second)), requests: slot.requests, syncs: slot.syncs,
                errors: slot.errors, p50: slot.percentile(0.5), p99: slot.percentile(0.99), gauge: slot.gauge)
        }
    }

    /// One second's counts.
    private struct Slot {
        var second: Int64 = .min
        var requests = 0
        var syncs = 0
        var errors = 0
        var gauge: Int?
        /// Sync counts by duration bucket (``LoadHistory/bucket(milliseconds:)``).
        var durations: [Int: Int] = [:]

        /// The duration below which `fraction` of the second's syncs took, in milliseconds.
        func percentile(_ fraction: Double) -> Double? {
            guard syncs > 0 else { return nil }
            let rank = max(1, Int((Double(syncs) * fraction).rounded(.up)))
            var seen = 0
            for bucket in durations.keys.sorted() {
                seen += durations[bucket] ?? 0
                if seen >= rank { return LoadHistory.milliseconds(ofBucket: bucket) }
            }
            return nil
        }
    }

    /// The upper ends of the duration buckets in milliseconds: 10 µs, then each 10 % above the one before.
    private static let bucketBounds: [Double] = {
        var bounds = [0.01]
        while bounds.count < 400 { bounds.append(bounds[bounds.count - 1] * 1.1) }
        return bounds
    }()

    /// The bucket of a duration: the first whose upper end is not below it (the last for longer ones).
    static func bucket(milliseconds: Double) -> Int {
        var low = 0
        var high = bucketBounds.count - 1
        while low < high {
            let middle = (low + high) / 2
            if bucketBounds[middle] < milliseconds { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The upper end of a bucket, in milliseconds, to three decimals.
    static func milliseconds(ofBucket bucket: Int) -> Double {
        (bucketBounds[bucket] * 1_000).rounded() / 1_000
    }

    private static func second(of date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }
}
