public import CoreMetrics

/// A ``SyncStore`` that times every call to the store it wraps, through swift-metrics.
///
/// Reports `anchorage_store_duration_seconds{operation}` (a timer: `transaction`,
/// `read`, `changes`, `latest_position`) and `anchorage_store_errors_total{operation}` for
/// calls that throw. A transaction's time includes its body, as a database sees it.
///
/// ```swift
/// let store = MeteredStore(try SQLiteStore(path: "sync.sqlite"))
/// let server = AquasyncServer(store: store, codecs: codecs)
/// ```
public struct MeteredStore: SyncStore {
    /// The store every call goes to.
    public let base: any SyncStore
    private let factory: any MetricsFactory
    /// The timers, made once: making one looks it up in the metrics backend's registry.
    private let timers: [String: CoreMetrics.Timer]

    /// Wraps `base`.
    /// - Parameters:
    ///   - base: The store every call goes to.
    ///   - factory: Where the metrics go; swift-metrics' global factory by default.
    public init(_ base: any SyncStore, factory: any MetricsFactory = MetricsSystem.factory) {
        self.base = base
        self.factory = factory
        timers = Dictionary(uniqueKeysWithValues: ["transaction", "read", "changes", "latest_position"].map { operation in
            (operation, CoreMetrics.Timer(label: "anchorage_store_duration_seconds", dimensions: [("operation", operation)], factory: factory))
        })
    }

    /// Runs the transaction on ``base``, timed as `transaction`.
    /// - Throws: What ``base`` throws.
    public func transaction<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        try await timed("transaction") { try await base.transaction(for: account, body) }
    }

    /// Runs the base store's transaction and tells its commit's positions, timed as a `transaction`.
    /// - Throws: What the base store throws.
    public func transactionWithPositions<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> (result: Result, positions: CommittedPositions?) {
        try await timed("transaction") { try await base.transactionWithPositions(for: account, body) }
    }

    /// Runs the base store's read of committed data, timed as a `read`.
    /// - Throws: What the base store throws.
    public func readCommitted<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        try await timed("read") { try await base.readCommitted(for: account, body) }
    }

    /// Reads changes from ``base``, timed as `changes`.
    /// - Throws: What ``base`` throws.
    public func changes(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> ChangeBatch {
        try await timed("changes") { try await base.changes(for: account, after: position, in: collections, limit: limit) }
    }

    /// Reads changes in the stored form from ``base``, timed as `changes`.
    /// - Throws: What ``base`` throws.
    public func encodedChanges(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int
    ) async throws -> EncodedChangeBatch {
        try await timed("changes") { try await base.encodedChanges(for: account, after: position, in: collections, limit: limit) }
    }

    /// Reads the latest position from ``base``, timed as `latest_position`.
    /// - Throws: What ``base`` throws.
    public func latestPosition(for account: AccountID) async throws -> ChangePosition {
        try await timed("latest_position") { try await base.latestPosition(for: account) }
    }

    private func timed<Result>(_ operation: String, _ body: () async throws -> Result) async throws -> Result {
        let start = ContinuousClock.now
        do {
            let result = try await body()
            record(operation, since: start)
            return result
        } catch {
            record(operation, since: start)
            Counter(label: "anchorage_store_errors_total", dimensions: [("operation", operation)], factory: factory).increment()
            throw error
        }
    }

    private func record(_ operation: String, since start: ContinuousClock.Instant) {
        timers[operation]?.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
    }
}
