public import CoreMetrics
import Synchronization

/// What a stack's server reports about the syncs it serves, through swift-metrics.
///
/// Every metric carries a `stack` dimension, so one backend shows the stacks of a
/// server side by side. The names are Prometheus-style:
/// - `anchorage_records_received_total` — records (deltas, objects, items) a device sent;
/// - `anchorage_records_sent_total` — records the server answered with;
/// - `anchorage_conflicts_total` — meetings of a device's version with another one, each
///   decided by the conflict policy (appSync: uploads refused for a primary key another object holds);
/// - `anchorage_sync_duration_seconds` — the time a stack takes over one sync operation
///   (a timer, with an `operation` dimension too: `push`, `pull`, `list`, `update`, `message`).
///
/// The metrics go to the factory given, by default swift-metrics' global one
/// (`MetricsSystem.bootstrap(_:)`), so an app reports them to any backend:
///
/// ```swift
/// let metrics = StackMetrics(stack: "notes")
/// let changes = try await metrics.timing("pull") { try await store.changes(for: account, after: start, in: nil, limit: 500) }
/// metrics.sent(changes.records.count)
/// ```
public struct StackMetrics: Sendable {
    /// The `stack` dimension: `aquasync`, `appsync`, `ota`, or a stack of your own.
    public let stack: String
    private let handles: Handles

    /// Makes the metrics of one stack. Their handles are made on first use and kept, so a server
    /// that keeps one `StackMetrics` asks the factory once per metric, not once per request.
    /// - Parameters:
    ///   - stack: The value of the `stack` dimension.
    ///   - factory: Where the metrics go; `nil` (the default) for swift-metrics' global factory as it
    ///     is when a metric is first used (`MetricsSystem.bootstrap(_:)` before the first request).
    public init(stack: String, factory: (any MetricsFactory)? = nil) {
        self.stack = stack
        self.handles = Handles(stack: stack, factory: factory)
    }

    /// Counts `count` records a device sent.
    public func received(_ count: Int) { increment(.received, by: count) }

    /// Counts `count` records sent to a device.
    public func sent(_ count: Int) { increment(.sent, by: count) }

    /// Counts `count` conflicts decided.
    public func conflicts(_ count: Int) { increment(.conflicts, by: count) }

    /// Runs `body` and records how long it took as `anchorage_sync_duration_seconds{stack, operation}`,
    /// whether it returns or throws.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func timing<Result>(
        _ operation: String, _ body: () async throws -> Result
    ) async rethrows -> Result {
        let start = ContinuousClock.now
        defer { handles.timer(operation).recordNanoseconds((ContinuousClock.now - start).nanoseconds) }
        return try await body()
    }

    private func increment(_ counter: CounterName, by count: Int) {
        guard count > 0 else { return }
        handles.counter(counter).increment(by: count)
    }

    /// The stack's counters, by label.
    private enum CounterName: String {
        case received = "anchorage_records_received_total"
        case sent = "anchorage_records_sent_total"
        case conflicts = "anchorage_conflicts_total"
    }

    /// The metric handles of one stack, made when first used.
    private final class Handles: Sendable {
        private struct State {
            var factory: (any MetricsFactory)?
            var counters: [CounterName: Counter] = [:]
            var timers: [String: CoreMetrics.Timer] = [:]
        }

        private let stack: String
        private let state: Mutex<State>

        init(stack: String, factory: (any MetricsFactory)?) {
            self.stack = stack
            self.state = Mutex(State(factory: factory))
        }

        func counter(_ name: CounterName) -> Counter {
            state.withLock { state in
                if let counter = state.counters[name] { return counter }
                let counter = Counter(label: name.rawValue, dimensions: [("stack", stack)], factory: Self.factory(&state))
                state.counters[name] = counter
                return counter
            }
        }

        func timer(_ operation: String) -> CoreMetrics.Timer {
            state.withLock { state in
                if let timer = state.timers[operation] { return timer }
                let timer = CoreMetrics.Timer(
                    label: "anchorage_sync_duration_seconds", dimensions: [("stack", stack), ("operation", operation)],
                    factory: Self.factory(&state))
                state.timers[operation] = timer
                return timer
            }
        }

        private static func factory(_ state: inout State) -> any MetricsFactory {
            if let factory = state.factory { return factory }
            let global = MetricsSystem.factory
            state.factory = global
            return global
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at `Int64.max`.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
