import Synchronization

/// First-in, first-out locks, one per account, that let transactions of one
/// account run one after another while other accounts run side by side.
///
/// A waiting transaction suspends (it holds no thread); ``release(_:)`` hands
/// the account to the transaction that has waited longest.
package final class AccountLocks: Sendable {
    private struct Queue {
        var waiters: [CheckedContinuation<Void, Never>] = []
        var nextWaiter = 0
    }

    /// The accounts currently held, with their waiting transactions.
    private let queues = Mutex<[AccountID: Queue]>([:])

    /// Locks with no account held.
    package init() {}

    /// Waits until no other holder owns `account`, then owns it.
    package func acquire(_ account: AccountID) async {
        let ownedAtOnce = queues.withLock { queues in
            guard queues[account] == nil else { return false }
            queues[account] = Queue()
            return true
        }
        if ownedAtOnce { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ownedNow = queues.withLock { queues in
                guard queues[account] != nil else {
                    queues[account] = Queue()
                    return true
                }
                queues[account]?.waiters.append(continuation)
                return false
            }
            if ownedNow { continuation.resume() }
        }
    }

    /// Hands `account` to the longest waiter, or frees it when none waits.
    package func release(_ account: AccountID) {
        let next: CheckedContinuation<Void, Never>? = queues.withLock { queues in
            guard var queue = queues.removeValue(forKey: account) else { return nil }
            guard queue.nextWaiter < queue.waiters.count else { return nil }
            let next = queue.waiters[queue.nextWaiter]
            queue.nextWaiter += 1
            if queue.nextWaiter >= 64, queue.nextWaiter * 2 >= queue.waiters.count {
                queue.waiters.removeFirst(queue.nextWaiter)
                queue.nextWaiter = 0
            }
            queues[account] = queue
            return next
        }
        next?.resume()
    }
}
