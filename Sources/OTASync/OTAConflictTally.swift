import SyncCore
import Synchronization

/// A conflict policy that counts the conflicts it passes to another, for the
/// `anchorage_conflicts_total` metric: the mingle runs in a transaction a store
/// may run more than once, so the count restarts with each run and is read
/// after the transaction commits.
final class OTAConflictTally: ConflictPolicy {
    private let base: any ConflictPolicy
    private let counted = Mutex(0)

    init(_ base: any ConflictPolicy) { self.base = base }

    /// The conflicts resolved since the last ``restart()``.
    var count: Int { counted.withLock { $0 } }

    /// Starts counting from zero (at the start of each run of a transaction body).
    func restart() { counted.withLock { $0 = 0 } }

    func resolve(_ conflict: Conflict) async -> Resolution {
        counted.withLock { $0 += 1 }
        return await base.resolve(conflict)
    }
}
