public import CoreMetrics
public import Prometheus
public import SyncCore
import Synchronization

/// What an HTTP sync server reports about itself: probes, metrics and request metrics.
///
/// ``SyncServiceResponder`` answers three paths itself, before authentication and
/// without credentials:
/// - `GET /health` — 200 while the process serves (liveness);
/// - `GET /ready` — 200 when ``readiness`` succeeds (or there is none), 503 when it throws;
/// - `GET /metrics` — the Prometheus text exposition of ``prometheus``, only when it is set
///   (otherwise the path goes to the service like any other).
///
/// Every other request is counted through swift-metrics (``metricsFactory``, by default
/// the global one an app bootstraps): `anchorage_http_requests_total{stack,status}`,
/// `anchorage_http_request_duration_seconds{stack}` and the gauge
/// `anchorage_http_requests_in_flight`; `stack` is the name ``stacks`` gives the
/// request's path prefix, `other` when none matches.
///
/// ```swift
/// let registry = PrometheusCollectorRegistry()
/// MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
/// let observability = ServerObservability(
///     readiness: ServerObservability.storeReadiness(store), prometheus: registry)
/// let server = HTTPSyncServer(service: router, authenticator: authenticator, observability: observability)
/// ```
public struct ServerObservability: Sendable {
    /// The stack names of the standard mounts: `/deltas` Aquasync, `/rest` appSync, `/ota` OTA.
    public static let standardStacks: [String: String] = ["/deltas": "aquasync", "/rest": "appsync", "/ota": "ota"]

    /// Checks that the server can do its work (`GET /ready`): throws when it cannot; `nil` is always ready.
    public var readiness: (@Sendable () async throws -> Void)?
    /// The registry `GET /metrics` exposes; `nil` leaves `/metrics` to the service.
    public var prometheus: PrometheusCollectorRegistry?
    /// Where request metrics go; `nil` is swift-metrics' global factory as it is when the server is made.
    public var metricsFactory: (any MetricsFactory)?
    /// The `stack` label of each path prefix (the longest matching prefix wins); others are `other`.
    public var stacks: [String: String]
    /// Where every counted request is also recorded a second at a time (the operator console reads it); `nil` for nowhere.
    public var loadHistory: LoadHistory?

    /// Makes the observability of a server.
    /// - Parameters:
    ///   - readiness: Checks that the server can do its work; `nil` is always ready.
    ///   - prometheus: The registry `GET /metrics` exposes, or `nil` for no `/metrics`.
    ///   - metricsFactory: Where request metrics go; `nil` for swift-metrics' global factory (bootstrap it first).
    ///   - stacks: The `stack` label of each path prefix.
    ///   - loadHistory: Where every counted request is also recorded a second at a time, or `nil`.
    public init(
        readiness: (@Sendable () async throws -> Void)? = nil, prometheus: PrometheusCollectorRegistry? = nil,
        metricsFactory: (any MetricsFactory)? = nil, stacks: [String: String] = Self.standardStacks,
        loadHistory: LoadHistory? = nil
    ) {
        self.loadHistory = loadHistory
        self.readiness = readiness
        self.prometheus = prometheus
        self.metricsFactory = metricsFactory
        self.stacks = stacks
    }

    /// A readiness check that asks `store` for a trivial read: the latest position of an account no one uses.
    public static func storeReadiness(_ store: any SyncStore) -> @Sendable () async throws -> Void {
        { _ = try await store.latestPosition(for: "anchorage.readiness-probe") }
    }

    /// The `stack` label of a request path.
    func stack(of path: Substring) -> String {
        var longest: (prefix: String, stack: String)?
        for (prefix, stack) in stacks where prefix.utf8.count > longest?.prefix.utf8.count ?? -1 {
            if Self.path(path, isUnder: prefix) { longest = (prefix, stack) }
        }
        return longest?.stack ?? "other"
    }

    /// Whether `path` is `prefix` or below it (`prefix/…` or `prefix:…`); every path is under `/`.
    private static func path(_ path: Substring, isUnder prefix: String) -> Bool {
        guard prefix != "/" else { return true }
        guard path.utf8.starts(with: prefix.utf8) else { return false }
        let next = path.utf8.dropFirst(prefix.utf8.count).first
        return next == nil || next == UInt8(ascii: "/") || next == UInt8(ascii: ":")
    }

    /// The factory request metrics go to now.
    var factory: any MetricsFactory { metricsFactory ?? MetricsSystem.factory }
}

/// The request metrics of one server, each made once: making a metric asks the factory for it, which for
/// Prometheus takes a lock, checks the name and looks it up in the registry, at every request.
final class RequestMetricHandles: Sendable {
    /// The metrics of one stack.
    private struct Stack {
        let duration: CoreMetrics.Timer
        var answered: [Int: CoreMetrics.Counter] = [:]
    }

    private let factory: any MetricsFactory
    private let made = Mutex<[String: Stack]>([:])
    /// `anchorage_http_requests_in_flight`.
    let inFlight: Meter

    /// The metrics that go to `factory`.
    init(factory: any MetricsFactory) {
        self.factory = factory
        inFlight = Meter(label: "anchorage_http_requests_in_flight", factory: factory)
    }

    /// `anchorage_http_request_duration_seconds{stack}` and `anchorage_http_requests_total{stack,status}`.
    func metrics(stack: String, status: Int) -> (duration: CoreMetrics.Timer, answered: CoreMetrics.Counter) {
        made.withLock { made in
            let duration =
                made[stack]?.duration
                ?? CoreMetrics.Timer(label: "anchorage_http_request_duration_seconds", dimensions: [("stack", stack)], factory: factory)
            if let answered = made[stack]?.answered[status] { return (duration, answered) }
            let answered = CoreMetrics.Counter(
                label: "anchorage_http_requests_total", dimensions: [("stack", stack), ("status", String(status))], factory: factory)
            made[stack, default: Stack(duration: duration)].answered[status] = answered
            return (duration, answered)
        }
    }
}

/// The metrics of one request, as ``SyncServiceResponder`` counts them.
struct RequestMetrics {
    let stack: String
    let handles: RequestMetricHandles
    let history: LoadHistory?
    let start = ContinuousClock.now

    /// Counts the request in flight; call ``finish(status:)`` once it is answered.
    init(stack: String, handles: RequestMetricHandles, history: LoadHistory? = nil) {
        self.stack = stack
        self.handles = handles
        self.history = history
        handles.inFlight.increment()
    }

    /// Counts the answered request by status and records its duration.
    func finish(status: Int) {
        handles.inFlight.decrement()
        let (duration, answered) = handles.metrics(stack: stack, status: status)
        answered.increment()
        let elapsed = ContinuousClock.now - start
        history?.record(stack: stack, status: status, duration: elapsed)
        let (seconds, attoseconds) = elapsed.components
        duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
