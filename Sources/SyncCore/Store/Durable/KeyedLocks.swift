import Synchronization

/// First-in, first-out locks, one per key, that let the holders of one key
/// run one after another while other keys run side by side: the transactions
/// of an account in a store, the messages of a session on a server.
///
/// A waiter suspends (it holds no thread); ``release(_:)`` hands the key to
/// the holder that has waited longest.
package final class KeyedLocks<Key: Hashable & Sendable>: Sendable {
    private struct Queue {
        var waiters: [CheckedContinuation<Void, Never>] = []
        var nextWaiter = 0
    }

    /// The keys currently held, with their waiters.
    private let queues = Mutex<[Key: Queue]>([:])

    /// Locks with no key held.
    package init() {}

    /// Waits until no other holder owns `key`, then owns it.
    package func acquire(_ key: Key) async {
        let ownedAtOnce = queues.withLock { queues in
            guard queues[key] == nil else { return false }
            queues[key] = Queue()
            return true
        }
        if ownedAtOnce { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ownedNow = queues.withLock { queues in
                guard queues[key] != nil else {
                    queues[key] = Queue()
                    return true
                }
                queues[key]?.waiters.append(continuation)
                return false
            }
            if ownedNow { continuation.resume() }
        }
    }

    /// How many holders wait for `key` (not counting the one that owns it).
    package func waiterCount(_ key: Key) -> Int {
        queues.withLock { queues in queues[key].map { $0.waiters.count - $0.nextWaiter } ?? 0 }
    }

    /// Hands `key` to the longest waiter, or frees it when none waits.
    package func release(_ key: Key) {
        let next: CheckedContinuation<Void, Never>? = queues.withLock { queues in
            guard var queue = queues.removeValue(forKey: key) else { return nil }
            guard queue.nextWaiter < queue.waiters.count else { return nil }
            let next = queue.waiters[queue.nextWaiter]
            queue.nextWaiter += 1
            if queue.nextWaiter >= 64, queue.nextWaiter * 2 >= queue.waiters.count {
                queue.waiters.removeFirst(queue.nextWaiter)
                queue.nextWaiter = 0
            }
            queues[key] = queue
            return next
        }
        next?.resume()
    }
}

/// One lock per account: a store's transactions of one account run one after another.
package typealias AccountLocks = KeyedLocks<AccountID>

extension KeyedLocks where Key == AccountID {
    /// Runs `attempt` holding `account`'s lock, and again while it returns `nil` (another process committed
    /// to the account since its reads), at most `attempts` times: a durable store's transaction. `attempt`
    /// is told how many attempts ran before it.
    /// - Throws: What `attempt` throws, or ``StoreError/Code/conflict`` when no attempt committed.
    package func retryingConflicts<Committed>(
        for account: AccountID, attempts: Int, _ attempt: (_ earlierAttempts: Int) async throws -> Committed?
    ) async throws -> Committed {
        await acquire(account)
        defer { release(account) }
        let attempts = max(1, attempts)
        for earlierAttempts in 0..<attempts {
            if let committed = try await attempt(earlierAttempts) { return committed }
        }
        throw StoreError(
            .conflict,
            "another process kept changing account \(account); "
                + "the transaction ran \(attempts) times without committing")
    }
}
