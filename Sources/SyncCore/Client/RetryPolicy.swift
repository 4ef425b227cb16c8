/// How a client retries a request that failed for a reason that may pass,
/// and how long it waits in between.
///
/// ```swift
/// let endpoint = SyncEndpoint(
///     transport: transport, codecs: CodecSet([JSONCodec()]),
///     retry: RetryPolicy(maxAttempts: 4, initialDelay: .milliseconds(500)))
/// ```
///
/// What is retried (``SyncEndpoint`` asks ``isTransient(status:idempotent:)``
/// and ``isTransient(_:)``):
/// - no answer at all: the connection failed, was cut, or timed out — but
///   not a failed TLS handshake (``TransportError/Code/tlsFailed``): an
///   untrusted certificate is as untrusted on the next attempt;
/// - 429 Too Many Requests and 503 Service Unavailable, for every request:
///   the server did not act on it;
/// - any other 5xx only for an idempotent request, which may be applied twice
///   without harm — except 507 Insufficient Storage, the account's quota,
///   which sending again does not change.
///
/// Waits grow by ``multiplier`` from ``initialDelay`` up to ``maxDelay``, and
/// ``jitter`` shortens each by a random part, so that clients failed by the
/// same outage do not all come back at the same instant. An answer's
/// `Retry-After` (``SyncResponse/retryAfter``) replaces the computed wait, as
/// long as it is at most ``maxRetryAfter``; a longer one ends the retries.
/// A request is retried unchanged, so a retry after a lost answer carries the
/// same ids as the first attempt. After a failure with no answer, no retry
/// begins once ``maxElapsed`` would have passed since the first attempt
/// began, so a server that cannot be reached is reported within that time
/// and its connect time-out, whatever ``maxAttempts`` says.
public struct RetryPolicy: Sendable, Hashable {
    /// How many times a request is sent at most (1 means no retry).
    public var maxAttempts: Int
    /// The wait before the first retry.
    public var initialDelay: Duration
    /// The factor each further wait grows by.
    public var multiplier: Int
    /// The longest wait between two attempts, before jitter.
    public var maxDelay: Duration
    /// The largest part of a wait taken off at random, from 0 (none: waits
    /// are exact) to 1 (a wait is anywhere from zero to its full length).
    public var jitter: Double
    /// The longest `Retry-After` the client waits for; a server asking for
    /// more gets no retry, and the failure is reported.
    public var maxRetryAfter: Duration
    /// The longest the attempts of one request that gets no answer may go on: a retry after a transport
    /// failure (no connection, a cut, a time-out) whose wait would end later than this after the first
    /// attempt began is not made. Answers the server gave (429, 503, 5xx) are retried by ``maxAttempts``
    /// and `Retry-After` alone. `nil` for no bound but ``maxAttempts``.
    public var maxElapsed: Duration?

    /// Makes a policy.
    /// - Parameters:
    ///   - maxAttempts: How many times a request is sent at most; at least 1.
    ///   - initialDelay: The wait before the first retry.
    ///   - multiplier: The factor each further wait grows by; at least 1.
    ///   - maxDelay: The longest wait, before jitter.
    ///   - jitter: The largest part of a wait taken off at random, clamped to 0…1.
    ///   - maxRetryAfter: The longest `Retry-After` honoured.
    ///   - maxElapsed: The longest the attempts of one request may go on, or `nil`.
    public init(
        maxAttempts: Int = 5, initialDelay: Duration = .milliseconds(200), multiplier: Int = 2,
        maxDelay: Duration = .seconds(10), jitter: Double = 0.5, maxRetryAfter: Duration = .seconds(60),
        maxElapsed: Duration? = .seconds(20)
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialDelay = initialDelay
        self.multiplier = max(1, multiplier)
        self.maxDelay = maxDelay
        self.jitter = jitter.isNaN ? 0 : min(1, max(0, jitter))
        self.maxRetryAfter = maxRetryAfter
        self.maxElapsed = maxElapsed
    }

    /// Five attempts, 0.2 s doubling up to 10 s, each wait shortened by up to half, none begun 20 s after the first.
    public static let `default` = RetryPolicy()
    /// One attempt: failures surface at once.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// A stopwatch on `sleeper`: the returned function tells the time since this call, to weigh the
    /// attempts made against ``maxElapsed``.
    public static func stopwatch(on sleeper: any Clock<Duration>) -> @Sendable () -> Duration {
        func start<C: Clock<Duration>>(_ sleeper: C) -> @Sendable () -> Duration {
            let start = sleeper.now
            return { start.duration(to: sleeper.now) }
        }
        return start(sleeper)
    }

    /// The wait before trying again after attempt number `attempt` (1 for the first) failed without an
    /// answer (no connection, a cut, a time-out), or `nil` when no attempt is left: ``maxAttempts`` were
    /// made, or the wait would end more than ``maxElapsed`` after the first attempt began, `elapsed` ago.
    /// What SyncEndpoint does for a request, for a client that reconnects by itself (mail, push).
    public func waitAfterNoAnswer(
        attempt: Int, elapsed: Duration, using generator: inout some RandomNumberGenerator
    ) -> Duration? {
        guard attempt < maxAttempts else { return nil }
        let wait = jitteredDelay(beforeRetry: attempt, using: &generator)
        if let maxElapsed, elapsed + wait > maxElapsed { return nil }
        return wait
    }

    /// The wait before retry number `retry` (1 for the first retry), before jitter.
    public func delay(beforeRetry retry: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, retry) {
            delay *= multiplier
            if delay >= maxDelay { return maxDelay }
        }
        return min(delay, maxDelay)
    }

    /// The wait before retry number `retry` with jitter drawn from `generator`:
    /// between `(1 - jitter)` times ``delay(beforeRetry:)`` and all of it.
    public func jitteredDelay(beforeRetry retry: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let full = delay(beforeRetry: retry)
        guard jitter > 0, full > .zero else { return full }
        return full * (1 - jitter * Double.random(in: 0..<1, using: &generator))
    }

    /// Whether an answer with `status` is worth sending again: 429 and 503
    /// always, another 5xx but 507 (a quota) only when the request is `idempotent`.
    public static func isTransient(status: Int, idempotent: Bool) -> Bool {
        switch status {
        case 429, 503: true
        case 507: false
        case 500...599: idempotent
        default: false
        }
    }

    /// Whether a transport failure is worth sending again: a failed or cut
    /// connection, or a time-out; not an answer that was not valid HTTP or too
    /// large, nor a failed TLS handshake.
    public static func isTransient(_ error: TransportError) -> Bool {
        error.code == .connectionFailed || error.code == .timedOut
    }
}
