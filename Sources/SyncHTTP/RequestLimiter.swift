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
/// let limiter = RequestLimiter(maxConcurrentRequests: 256, requestTimeout: .seconds(60), clock: ContinuousClock())
/// ```
public final class RequestLimiter: Sendable {
    /// The most requests in service at once; `nil` for no limit.
    public let maxConcurrentRequests: Int?
    /// The longest a service may take; `nil` for no limit.
    public let requestTimeout: Duration?
    /// The wait a busy server asks a client for.
    public let busyRetryAfter: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let inFlight = Atomic<Int>(0)

    /// Makes a limiter that measures time with `clock` (a `TestClock` in tests).
    /// - Parameters:
    ///   - maxConcurrentRequests: The most requests in service at once (at least 1), or `nil`.
    ///   - requestTimeout: The longest a service may take, or `nil`.
    ///   - busyRetryAfter: The `Retry-After` of the 503s.
    public init<C: Clock>(
        maxConcurrentRequests: Int?, requestTimeout: Duration?, busyRetryAfter: Duration = .seconds(1), clock: C
    ) where C.Duration == Duration {
        self.maxConcurrentRequests = maxConcurrentRequests.map { max(1, $0) }
        self.requestTimeout = requestTimeout
        self.busyRetryAfter = busyRetryAfter
        self.sleep = { try await clock.sleep(for: $0) }
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
        guard let requestTimeout else {
            defer { leave() }
            return await work()
        }
        let timedOut = SyncServiceError(
            status: 503, message: "the request took longer than the server allows (\(requestTimeout))",
            retryAfter: busyRetryAfter
        ).response
        let race = Race()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SyncResponse, Never>) in
                race.start(continuation)
                let task = Task { [self] in
                    defer { leave() }
                    race.finish(with: await work())
                }
                let timer = Task { [sleep] in
                    guard (try? await sleep(requestTimeout)) != nil else { return }
                    if race.finish(with: timedOut) { task.cancel() }
                }
                race.setTasks(work: task, timer: timer)
            }
        } onCancel: {
            race.cancelAll()
        }
    }

    /// The first of the work and the timer to finish answers; the other is cancelled.
    private final class Race: Sendable {
        private struct State {
            var continuation: CheckedContinuation<SyncResponse, Never>?
            var work: Task<Void, Never>?
            var timer: Task<Void, Never>?
            var finished = false
            var cancelled = false
        }
        private let state = Mutex(State())

        func start(_ continuation: CheckedContinuation<SyncResponse, Never>) {
            state.withLock { $0.continuation = continuation }
        }

        func setTasks(work: Task<Void, Never>, timer: Task<Void, Never>) {
            let (finished, cancelled) = state.withLock { state in
                state.work = work
                state.timer = timer
                return (state.finished, state.cancelled)
            }
            if finished || cancelled { timer.cancel() }
            if cancelled { work.cancel() }
        }

        /// Answers with `response` if nothing answered yet; `true` when it did.
        @discardableResult
        func finish(with response: SyncResponse) -> Bool {
            let (continuation, timer) = state.withLock { state in
                guard !state.finished else { return (nil as CheckedContinuation<SyncResponse, Never>?, nil as Task<Void, Never>?) }
                state.finished = true
                defer { state.continuation = nil }
                return (state.continuation, state.timer)
            }
            guard let continuation else { return false }
            timer?.cancel()
            continuation.resume(returning: response)
            return true
        }

        func cancelAll() {
            let (work, timer) = state.withLock { state in
                state.cancelled = true
                return (state.work, state.timer)
            }
            work?.cancel()
            timer?.cancel()
        }
    }
}
