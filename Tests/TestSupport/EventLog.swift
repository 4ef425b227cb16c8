/// Records the events of a stream — a push client's, a mail daemon's — and waits, with a bound, for
/// one that matches.
public actor EventLog<Event: Sendable> {
    /// Every event recorded so far, in order.
    public private(set) var events: [Event] = []
    private var waiters: [(id: Int, match: @Sendable (Event) -> Bool, continuation: CheckedContinuation<Event?, Never>)] = []
    private var nextWaiter = 0
    private var task: Task<Void, Never>?

    /// Why a wait ended without its event.
    public struct Timeout: Error, CustomStringConvertible {
        /// What was waited for, and what was seen.
        public var description: String
    }

    /// Starts recording `events`.
    public static func recording(_ events: AsyncStream<Event>) async -> EventLog {
        let log = EventLog()
        await log.start(events)
        return log
    }

    private func start(_ events: AsyncStream<Event>) {
        task = Task { [weak self] in
            for await event in events { await self?.record(event) }
        }
    }

    private func record(_ event: Event) {
        events.append(event)
        let (ready, waiting) = (waiters.filter { $0.match(event) }, waiters.filter { !$0.match(event) })
        waiters = waiting
        for waiter in ready { waiter.continuation.resume(returning: event) }
    }

    /// The first event from `index` on that matches, waiting up to `timeout` for it.
    ///
    /// The bound only ends a test that would otherwise hang, so it is wide: inside the whole suite on
    /// two cores, the test process shares the machine with many servers and tools, and an event that
    /// takes a second alone can take a minute. When it runs out, the waiter still lets every job
    /// already queued run before giving up, so an event that became due during a stall of the whole
    /// process is not reported missing because the timer happened to run first.
    /// - Throws: ``Timeout`` naming what was seen when none came in time.
    @discardableResult
    public func wait(
        for what: String, from index: Int = 0, timeout: Duration = .seconds(150), _ match: @escaping @Sendable (Event) -> Bool
    ) async throws -> Event {
        if let seen = events.dropFirst(index).first(where: match) { return seen }
        let id = nextWaiter
        nextWaiter += 1
        let timer = Task { [weak self] in
            try? await ContinuousClock().sleep(for: timeout)  // the bound, not a synchronisation
            for _ in 0..<10 { await Task.yield() }
            await self?.expire(id)
        }
        defer { timer.cancel() }
        let event = await withCheckedContinuation { continuation in waiters.append((id, match, continuation)) }
        guard let event else { throw Timeout(description: "no \(what) within \(timeout); events: \(events)") }
        return event
    }

    private func expire(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: nil)
    }

    /// How many events were recorded.
    public var count: Int { events.count }
}

extension EventLog where Event: Equatable {
    /// The position of the first `event` at or after `start`, if it was recorded.
    public func index(of event: Event, from start: Int) -> Int? {
        events.indices.dropFirst(start).first { events[$0] == event }
    }
}
