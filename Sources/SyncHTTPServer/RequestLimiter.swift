import Synchronization
import SyncCore

/// Caps the requests a server serves at once and the time each may take.
///
/// - Above ``maxConcurrentRequests`` in service at once, a new request is
///   answered 503 with `Retry-After` (``busyRetryAfter``) before its body is read.
/// - A request whose service takes longer than ``requestTimeout`` is
///   answered 503 with `Retry-After`, and its work is cancelled (a store
///   transaction cancelled before it commits rolls back). The request keeps
///   its place in the count until its work has stopped, so work that ignores
///   cancellation still holds the server back from taking more.
///
/// ```swift
/// let limiter = RequestLimiter(maxConcurrentRequests: 256, requestTimeout: .seconds(60), sleeper: ContinuousClock())
/// ```
public final class RequestLimiter: Sendable {
    /// The most requests in service at once; `nil` for no limit.
    public let maxConcurrentRequests: Int?
    /// The longest a service may take; `nil` for no limit.
    public let requestTimeout: Duration?
    /// The wait a busy server asks a client for.
    public let busyRetryAfter: Duration
    private let deadlines: RequestDeadlines?
    private let inFlight = Atomic<Int>(0)

    /// Makes a limiter that measures time with `sleeper` (a `TestClock` in tests).
    /// - Parameters:
    ///   - maxConcurrentRequests: The most requests in service at once (at least 1), or `nil`.
    ///   - requestTimeout: The longest a service may take, or `nil`.
    ///   - busyRetryAfter: The `Retry-After` of the 503s.
    public init<C: Clock>(
        maxConcurrentRequests: Int?, requestTimeout: Duration?, busyRetryAfter: Duration = .seconds(1), sleeper: C
    ) where C.Duration == Duration {
        self.maxConcurrentRequests = maxConcurrentRequests.map { max(1, $0) }
        self.requestTimeout = requestTimeout
        self.busyRetryAfter = busyRetryAfter
        self.deadlines = requestTimeout.map { RequestDeadlines(timeout: $0, retryAfter: busyRetryAfter, sleeper: sleeper) }
    }

    /// Makes a limiter that measures time with `clock`.
    @available(*, deprecated, renamed: "init(maxConcurrentRequests:requestTimeout:busyRetryAfter:sleeper:)")
    public convenience init<C: Clock>(
        maxConcurrentRequests: Int?, requestTimeout: Duration?, busyRetryAfter: Duration = .seconds(1), clock: C
    ) where C.Duration == Duration {
        self.init(
            maxConcurrentRequests: maxConcurrentRequests, requestTimeout: requestTimeout, busyRetryAfter: busyRetryAfter,
            sleeper: clock)
    }

    /// The requests in service now.
    public var requestsInService: Int { inFlight.load(ordering: .relaxed) }

    /// Takes a place for a request; `false` when the server is full.
    func enter() -> Bool {
        let count = inFlight.wrappingAdd(1, ordering: .relaxed).newValue
        if let maxConcurrentRequests, count > maxConcurrentRequests {
            inFlight.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Gives a place back.
    func leave() { inFlight.wrappingSubtract(1, ordering: .relaxed) }

    /// The 503 a full server answers.
    var busyResponse: SyncResponse {
        SyncServiceError(
            status: 503, message: "the server is serving as many requests as it may; try again shortly",
            retryAfter: busyRetryAfter
        ).response
    }

    /// Runs `work` within ``requestTimeout``; when the time is up, cancels it
    /// and answers 503 without waiting for it. Gives the request's place back when `work` ends.
    func run(_ work: @escaping @Sendable () async -> SyncResponse) async -> SyncResponse {
        guard let deadlines else {
            defer { leave() }
            return await work()
        }
        let race = RequestDeadlines.Race()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SyncResponse, Never>) in
                race.start(continuation)
                let id = deadlines.watch(race)
                race.setWork(Task { [self] in
                    defer { leave() }
                    let response = await work()
                    deadlines.forget(id)
                    race.finish(with: response)
                })
            }
        } onCancel: {
            race.cancel()
        }
    }
}
