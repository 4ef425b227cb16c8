/// How a client retries a request that failed for a reason that may pass:
/// a dropped connection, a timeout, or a 5xx or 429 answer.
///
/// Delays grow by ``multiplier`` from ``initialDelay`` up to ``maxDelay``.
/// A request is retried unchanged — a pushed pack keeps its `_id` — so a
/// retry after a lost answer is never applied twice.
public struct RetryPolicy: Sendable, Hashable {
    /// How many times a request is sent at most (1 means no retry).
    public var maxAttempts: Int
    /// The wait before the first retry.
    public var initialDelay: Duration
    /// The factor each further wait grows by.
    public var multiplier: Int
    /// The longest wait between two attempts.
    public var maxDelay: Duration

    /// Makes a policy.
    public init(maxAttempts: Int = 5, initialDelay: Duration = .milliseconds(200), multiplier: Int = 2,
        maxDelay: Duration = .seconds(10))
    {
        self.maxAttempts = max(1, maxAttempts)
        self.initialDelay = initialDelay
        self.multiplier = max(1, multiplier)
        self.maxDelay = maxDelay
    }

    /// Five attempts, 0.2 s doubling up to 10 s.
    public static let `default` = RetryPolicy()
    /// One attempt: failures surface at once.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The wait before retry number `retry` (1 for the first retry).
    public func delay(beforeRetry retry: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, retry) {
            delay *= multiplier
            if delay >= maxDelay { return maxDelay }
        }
        return min(delay, maxDelay)
    }

    /// Whether an answer with `status` is worth retrying.
    public static func isTransient(status: Int) -> Bool {
        status == 429 || (500...599).contains(status)
    }
}
