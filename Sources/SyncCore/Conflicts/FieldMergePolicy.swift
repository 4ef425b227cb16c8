/// Merges two versions field by field against the version both started from
/// (a three-way merge), so that edits to different fields both survive.
///
/// For each field, comparing each side with ``Conflict/base``:
/// - unchanged on one side → the other side's value (a field added or removed
///   on one side only is added or removed);
/// - changed on both sides to the same value → that value;
/// - changed on both sides to different values → the ``fallback`` policy
///   decides that field. It sees a conflict narrowed to the field (each record
///   holds only that field), so a ``DeferredPolicy`` can ask about just it. If
///   it answers ``Resolution/keepBoth`` or ``Resolution/deferred``, that
///   becomes the answer for the whole record.
///
/// A deleted record against a modified one follows ``deletionRule`` (by
/// default the modification wins); a deletion against a side that did not
/// change since the base wins. Without a base, the ``fallback`` decides for
/// the whole record.
///
/// The answer is ``Resolution/keepLocal`` or ``Resolution/takeRemote`` when
/// the merge equals one side, else ``Resolution/merged(_:)`` with a record
/// that carries the later of the two versions (stacks restamp it when they
/// store it). With a side-independent fallback (the default), both sides of
/// a sync reach the same record.
///
/// ```swift
/// let client = AppSyncClient(…, configuration: .init(conflictPolicy: .fieldMerge()))
/// let strict = FieldMergePolicy(fallback: .serverWins, deletionRule: .deletionWins)
/// ```
public struct FieldMergePolicy: ConflictPolicy {
    /// What happens when one side deleted the record and the other changed it.
    public enum DeletionRule: Sendable, Hashable {
        /// The changed record survives, so no edit is lost (the default).
        case modificationWins
        /// The deletion stands.
        case deletionWins
        /// The ``FieldMergePolicy/fallback`` policy decides.
        case fallback
    }

    /// The policy for what the merge cannot decide: a field changed on both
    /// sides, and a whole record when there is no base.
    public var fallback: any ConflictPolicy
    /// What happens when one side deleted the record and the other changed it.
    public var deletionRule: DeletionRule

    /// Makes the policy.
    /// - Parameters:
    ///   - fallback: Decides fields changed on both sides, and records without a base;
    ///     ``NewestWinsPolicy`` by default.
    ///   - deletionRule: What happens when one side deleted the record and the other changed it.
    public init(fallback: any ConflictPolicy = NewestWinsPolicy(), deletionRule: DeletionRule = .modificationWins) {
        self.fallback = fallback
        self.deletionRule = deletionRule
    }

    /// Merges the two versions against the base; see ``FieldMergePolicy``.
    public func resolve(_ conflict: Conflict) async -> Resolution {
        guard let base = conflict.base else { return await fallback.resolve(conflict) }
        if conflict.local.isDeleted || conflict.remote.isDeleted {
            return await resolveDeletion(conflict, base: base)
        }
        let local = conflict.local.fields
        let remote = conflict.remote.fields
        let original = base.isDeleted ? [:] : base.fields

        var merged: [String: SyncValue] = [:]
        // Sorted, so that a fallback that asks sees the fields in the same order every time.
        for key in Set(local.keys).union(remote.keys).union(original.keys).sorted() {
            let localValue = local[key]
            let remoteValue = remote[key]
            let chosen: SyncValue?
            if localValue == remoteValue {
                chosen = localValue
            } else if localValue == original[key] {
                chosen = remoteValue
            } else if remoteValue == original[key] {
                chosen = localValue
            } else {
                switch await fallback.resolve(Self.narrow(conflict, base: base, to: key)) {
                case .keepLocal: chosen = localValue
                case .takeRemote: chosen = remoteValue
                case .merged(let record): chosen = record.fields[key]
                case .keepBoth: return .keepBoth
                case .deferred: return .deferred
                }
            }
            merged[key] = chosen
        }
        return Self.resolution(for: merged, in: conflict)
    }

    /// A deleted record against a live or deleted one.
    private func resolveDeletion(_ conflict: Conflict, base: SyncRecord) async -> Resolution {
        let local = conflict.local
        let remote = conflict.remote
        if local.isDeleted && remote.isDeleted {
            return RecordOrdering.isNewer(remote, than: local) ? .takeRemote : .keepLocal
        }
        let localDeleted = local.isDeleted
        let survivor = localDeleted ? remote : local
        let survivorChanged = base.isDeleted || survivor.fields != base.fields
        let deletionWins: Bool
        if !survivorChanged {
            deletionWins = true
        } else {
            switch deletionRule {
            case .modificationWins: deletionWins = false
            case .deletionWins: deletionWins = true
            case .fallback: return await fallback.resolve(conflict)
            }
        }
        return deletionWins == localDeleted ? .keepLocal : .takeRemote
    }

    /// The conflict with each record holding only the field `key`.
    private static func narrow(_ conflict: Conflict, base: SyncRecord, to key: String) -> Conflict {
        func narrowed(_ record: SyncRecord) -> SyncRecord {
            var record = record
            record.fields = record.fields[key].map { [key: $0] } ?? [:]
            return record
        }
        return Conflict(
            local: narrowed(conflict.local), remote: narrowed(conflict.remote), base: narrowed(base),
            resolvingSide: conflict.resolvingSide)
    }

    /// Names a side when the merge equals it, so both sides converge on one record.
    private static func resolution(for merged: [String: SyncValue], in conflict: Conflict) -> Resolution {
        let local = conflict.local
        let remote = conflict.remote
        switch (merged == local.fields, merged == remote.fields) {
        case (true, true): return RecordOrdering.isNewer(remote, than: local) ? .takeRemote : .keepLocal
        case (true, false): return .keepLocal
        case (false, true): return .takeRemote
        case (false, false):
            return .merged(
                SyncRecord(
                    collection: local.collection, id: local.id, fields: merged, isDeleted: false,
                    version: max(local.version, remote.version)))
        }
    }
}
