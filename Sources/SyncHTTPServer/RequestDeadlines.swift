import Synchronization
import SyncCore

/// Times out the requests in service with one timer for all of them.
///
/// Every request gets the same time limit, so the request that came first is
/// always the first due: one watcher task sleeps until the deadline of the
/// oldest request still in service, answers every request then due with 503
/// (and cancels its work), and sleeps again. A request that ends in time only
/// leaves the list, so a request costs a lock and a dictionary entry instead
/// of a timer task of its own. The watcher stops when no request is in service
/// and the next request starts it again.
final class RequestDeadlines: Sendable {
    /// The time each request may take.
    let timeout: Duration
    private let timedOut: SyncResponse
    private let elapsed: @Sendable () -> Duration
    private let sleep: @Sendable (_ untilElapsed: Duration) async throws -> Void
    private let state = Mutex(State())

    private struct State {
        /// The requests in service by number, each with its deadline (time since the origin).
        var inService: [UInt64: (deadline: Duration, race: Race)] = [:]
        /// The number the next request gets.
        var nextID: UInt64 = 0
        /// No request numbered below this one is in service.
        var oldest: UInt64 = 0
        /// Whether the watcher task runs.
        var watching = false

        /// The oldest request in service, skipping those that ended.
        mutating func oldestInService() -> (deadline: Duration, race: Race)? {
            while oldest < nextID {
                if let entry = inService[oldest] { return entry }
                oldest += 1
            }
            return nil
        }
    }

    /// Makes the deadlines of requests that may take `timeout` each, by `sleeper`.
    init<C: Clock>(timeout: Duration, retryAfter: Duration, sleeper: C) where C.Duration == Duration {
        self.timeout = timeout
        self.timedOut = SyncServiceError(
            status: 503, message: "the request took longer than the server allows (\(timeout))", retryAfter: retryAfter
        ).response
        let origin = sleeper.now
        self.elapsed = { origin.duration(to: sleeper.now) }
        self.sleep = { try await sleeper.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    /// Starts the clock of a request; returns its number for ``forget(_:)``.
    func watch(_ race: Race) -> UInt64 {
        let (id, startWatcher) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            // Taken under the lock, so that deadlines grow with the request number.
            state.inService[id] = (elapsed() + timeout, race)
            defer { state.watching = true }
            return (id, !state.watching)
        }
        if startWatcher { Task { await watchUntilIdle() } }
        return id
    }

    /// Takes a request that ended in time off the list.
    func forget(_ id: UInt64) {
        _ = state.withLock { $0.inService.removeValue(forKey: id) }
    }

    /// Sleeps until the oldest request's deadline and times out what is due, until no request is in service.
    private func watchUntilIdle() async {
        while true {
            let next: Duration? = state.withLock { state in
                guard let oldest = state.oldestInService() else {
                    state.watching = false
                    return nil
                }
                return oldest.deadline
            }
            guard let next else { return }
            try? await sleep(next)
            let now = elapsed()
            let due: [Race] = state.withLock { state in
                var due: [Race] = []
                // Deadlines grow with the request number, so the due requests are the oldest ones.
                while let oldest = state.oldestInService(), oldest.deadline <= now {
                    state.inService[state.oldest] = nil
                    due.append(oldest.race)
                }
                return due
            }
            for race in due where race.finish(with: timedOut) { race.cancel() }
        }
    }

    /// The answer to one request: its work's response, or the 503 of its deadline, whichever comes first.
    final class Race: Sendable {
        private struct State {
            var continuation: CheckedContinuation<SyncResponse, Never>?
            var work: Task<Void, Never>?
            var finished = false
            var cancelled = false
        }
        private let state = Mutex(State())

        /// Makes a race that nothing answered yet.
        init() {}

        /// Keeps the continuation the answer resumes.
        func start(_ continuation: CheckedContinuation<SyncResponse, Never>) {
            state.withLock { $0.continuation = continuation }
        }

        /// Keeps the task doing the request's work, to cancel it; cancels it at once when the race was cancelled.
        func setWork(_ work: Task<Void, Never>) {
            let cancelled = state.withLock { state in
                state.work = work
                return state.cancelled
            }
            if cancelled { work.cancel() }
        }

        /// Answers with `response` if nothing answered yet; `true` when it did.
        @discardableResult
        func finish(with response: SyncResponse) -> Bool {
            let continuation = state.withLock { state -> CheckedContinuation<SyncResponse, Never>? in
                guard !state.finished else { return nil }
                state.finished = true
                defer { state.continuation = nil }
                return state.continuation
            }
            guard let continuation else { return false }
            continuation.resume(returning: response)
            return true
        }

        /// Cancels the request's work (now, or as soon as it is set).
        func cancel() {
            let work = state.withLock { state in
                state.cancelled = true
                return state.work
            }
            work?.cancel()
        }
    }
}
