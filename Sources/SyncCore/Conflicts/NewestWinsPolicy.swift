/// The version changed last wins: the seed's "timestamp priority".
///
/// Versions compare by ``RecordVersion`` — modification time, then node name
/// — so two versions with the same time still have one winner, and every
/// node picks the same one whichever side it is on. Two versions equal in
/// time and node (one node wrote twice within its clock's resolution) are
/// ordered by their content, so even then both sides agree.
///
/// ```swift
/// let client = AppSyncClient(…, configuration: .init(conflictPolicy: .newestWins))
/// ```
public struct NewestWinsPolicy: ConflictPolicy {
    /// Makes the policy.
    public init() {}

    /// Keeps the later version; takes the remote one when it is later.
    public func resolve(_ conflict: Conflict) async -> Resolution {
        RecordOrdering.isNewer(conflict.remote, than: conflict.local) ? .takeRemote : .keepLocal
    }
}
