/// Tasks waiting until a count (of sleepers, of held requests) reaches a
/// number; kept inside the lock of the state that owns the count.
struct CountWaiters: Sendable {
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Adds a waiter for `count`.
    mutating func add(_ count: Int, _ continuation: CheckedContinuation<Void, Never>) {
        waiters.append((count, continuation))
    }

    /// Removes and returns the waiters whose count is at most `current`;
    /// the caller resumes them after leaving the lock.
    mutating func takeReady(current: Int) -> [CheckedContinuation<Void, Never>] {
        var ready: [CheckedContinuation<Void, Never>] = []
        waiters.removeAll { waiter in
            guard waiter.count <= current else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }
}
