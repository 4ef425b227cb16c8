public import CoreMetrics

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
    private let factory: any MetricsFactory

    /// Makes the metrics of one stack.
    /// - Parameters:
    ///   - stack: The value of the `stack` dimension.
    ///   - factory: Where the metrics go; swift-metrics' global factory by default.
    public init(stack: String, factory: any MetricsFactory = MetricsSystem.factory) {
        self.stack = stack
        self.factory = factory
    }

    /// Counts `count` records a device sent.
    public func received(_ count: Int) { increment("anchorage_records_received_total", by: count) }

    /// Counts `count` records sent to a device.
    public func sent(_ count: Int) { increment("anchorage_records_sent_total", by: count) }

    /// Counts `count` conflicts decided.
    public func conflicts(_ count: Int) { increment("anchorage_conflicts_total", by: count) }

    /// Runs `body` and records how long it took as `anchorage_sync_duration_seconds{stack, operation}`,
    /// whether it returns or throws.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func timing<Result>(
        _ operation: String, _ body: () async throws -> Result
    ) async rethrows -> Result {
        let start = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - start
            CoreMetrics.Timer(
                label: "anchorage_sync_duration_seconds", dimensions: [("stack", stack), ("operation", operation)],
                factory: factory
            ).recordNanoseconds(elapsed.nanoseconds)
        }
        return try await body()
    }

    private func increment(_ label: String, by count: Int) {
        guard count > 0 else { return }
        Counter(label: label, dimensions: [("stack", stack)], factory: factory).increment(by: count)
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
