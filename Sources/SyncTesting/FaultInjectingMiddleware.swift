public import SyncCore
import Synchronization

/// A client middleware that injects transport faults — drops, duplicates,
/// delays, reordering, lost answers and server errors — following a
/// ``FaultPlan``, so tests can check that a sync survives a bad network.
///
/// ```swift
/// let clock = TestClock()
/// let faults = FaultInjectingMiddleware(
///     plan: .scripted([nil, .cutAfterProcessing, .delay(.seconds(5))]), sleeper: clock)
/// let transport = LoopbackTransport(service: server, authenticator: auth).with(faults)
/// // … run the client over `transport` …
/// #expect(faults.counts.cutAfterProcessing == 1)
/// ```
///
/// The plan is consulted once per request, in the order requests arrive, so
/// a seeded plan gives the same faults for the same requests. A
/// ``TransportFault/reorder`` request waits until the next request has been
/// answered; when no next request will come, call ``releaseHeldRequests()``.
public final class FaultInjectingMiddleware<FaultClock: Clock>: SyncClientMiddleware, Sendable
where FaultClock.Duration == Duration {
    private struct HeldRequest {
        var id: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var plan: FaultPlan
        var counts = FaultCounts()
        var events: [FaultEvent] = []
        var nextHeldID: UInt64 = 0
        var held: [HeldRequest] = []
        var heldWaiters = CountWaiters()
    }

    /// The clock ``TransportFault/delay(_:)`` sleeps on.
    public let sleeper: FaultClock
    /// The clock ``TransportFault/delay(_:)`` sleeps on.
    @available(*, deprecated, renamed: "sleeper")
    public var clock: FaultClock { sleeper }
    private let appliesTo: @Sendable (SyncRequest) -> Bool
    private let state: Mutex<State>

    /// Makes the middleware.
    /// - Parameters:
    ///   - plan: which fault each request gets.
    ///   - sleeper: the clock delays sleep on; a ``TestClock`` makes them wait for the test.
    ///   - appliesTo: the requests the plan applies to; the others pass through uncounted.
    public init(
        plan: FaultPlan, sleeper: FaultClock, appliesTo: @escaping @Sendable (SyncRequest) -> Bool = { _ in true }
    ) {
        self.sleeper = sleeper
        self.appliesTo = appliesTo
        self.state = Mutex(State(plan: plan))
    }

    /// Makes the middleware with delays slept on `clock`.
    @available(*, deprecated, renamed: "init(plan:sleeper:appliesTo:)")
    public convenience init(
        plan: FaultPlan, clock: FaultClock, appliesTo: @escaping @Sendable (SyncRequest) -> Bool = { _ in true }
    ) {
        self.init(plan: plan, sleeper: clock, appliesTo: appliesTo)
    }

    /// What the middleware has done so far.
    public var counts: FaultCounts { state.withLock { $0.counts } }

    /// Every request the plan applied to, in order of arrival, with its fault.
    public var events: [FaultEvent] { state.withLock { $0.events } }

    /// How many ``TransportFault/reorder`` requests are waiting for a next request.
    public var heldRequestCount: Int { state.withLock { $0.held.count } }

    /// Sends every held ``TransportFault/reorder`` request on now, without
    /// waiting for a next request.
    public func releaseHeldRequests() {
        let held = state.withLock { state in
            defer { state.held.removeAll() }
            return state.held
        }
        for request in held { request.continuation.resume() }
    }

    /// Waits until at least `count` ``TransportFault/reorder`` requests are
    /// held, so a test can send the request meant to overtake them.
    public func waitForHeldRequests(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.held.count >= count { return true }
                state.heldWaiters.add(count, continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Applies the plan's next fault to `request`.
    /// - Throws: ``SyncCore/TransportError`` for a dropped request or a lost
    ///   answer; `CancellationError` when cancelled while delayed or held;
    ///   what `next` throws.
    public func intercept(
        _ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        guard appliesTo(request) else { return try await next(request) }
        let (fault, heldBefore) = state.withLock { state in
            let fault = state.plan.next()
            state.events.append(FaultEvent(index: state.counts.requests, path: request.path, fault: fault))
            state.counts.record(fault)
            return (fault, state.held.map(\.id))
        }
        if fault == .reorder {
            try await hold()
            return try await next(request)
        }
        defer { release(heldBefore) }
        return try await deliver(request, with: fault, next: next)
    }

    private func deliver(
        _ request: SyncRequest, with fault: TransportFault?, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        switch fault {
        case nil, .reorder:
            return try await next(request)
        case .drop:
            throw TransportError(.connectionFailed, "injected fault: \(request.method) \(request.path) was dropped")
        case .duplicate:
            let first: Result<SyncResponse, any Error>
            do { first = .success(try await next(request)) } catch { first = .failure(error) }
            _ = try? await next(request)
            return try first.get()
        case .delay(let duration):
            try await sleeper.sleep(for: duration)
            return try await next(request)
        case .cutAfterProcessing:
            _ = try await next(request)
            throw TransportError(
                .connectionFailed,
                "injected fault: the connection was cut after the server processed \(request.method) \(request.path)")
        case .serverError(let status):
            return SyncServiceError(status: status, message: "injected fault: server error \(status)").response
        }
    }

    /// Waits until a later request has been answered (or the hold is released).
    private func hold() async throws {
        let id = state.withLock { state in
            state.nextHeldID += 1
            return state.nextHeldID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                    // A cancellation that came before this lock found nothing to release.
                    if Task.isCancelled { return nil }
                    state.held.append(HeldRequest(id: id, continuation: continuation))
                    return state.heldWaiters.takeReady(current: state.held.count)
                }
                guard let waiters else { return continuation.resume(throwing: CancellationError()) }
                for waiter in waiters { waiter.resume() }
            }
        } onCancel: {
            let held = state.withLock { state -> HeldRequest? in
                guard let index = state.held.firstIndex(where: { $0.id == id }) else { return nil }
                return state.held.remove(at: index)
            }
            held?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Sends on the held requests among `ids`, oldest first.
    private func release(_ ids: [UInt64]) {
        guard !ids.isEmpty else { return }
        let released = state.withLock { state -> [HeldRequest] in
            var released: [HeldRequest] = []
            state.held.removeAll { request in
                guard ids.contains(request.id) else { return false }
                released.append(request)
                return true
            }
            return released
        }
        for request in released { request.continuation.resume() }
    }
}

extension FaultInjectingMiddleware where FaultClock == ContinuousClock {
    /// Makes the middleware with delays on the real continuous clock.
    /// - Parameters:
    ///   - plan: which fault each request gets.
    ///   - appliesTo: the requests the plan applies to; the others pass through uncounted.
    public convenience init(plan: FaultPlan, appliesTo: @escaping @Sendable (SyncRequest) -> Bool = { _ in true }) {
        self.init(plan: plan, sleeper: ContinuousClock(), appliesTo: appliesTo)
    }
}
