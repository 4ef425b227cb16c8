public import SyncCore

/// Aquasync's own conflict rule, the seed's `#resolveConflict`: the version
/// with the newer `localTimestamp` wins, and on a tie the greater
/// `deviceToken` (string order), so every node picks the same winner
/// whatever order versions arrive in and whichever side it is on.
///
/// It is the default ``AquasyncServer/conflictPolicy`` and
/// ``AquasyncClient/Configuration/conflictPolicy``:
///
/// ```swift
/// let server = AquasyncServer(store: store, codecs: codecs)                  // AquasyncNewestWins
/// let strict = AquasyncServer(store: store, codecs: codecs, conflictPolicy: .serverWins)
/// ```
///
/// It differs from SyncCore's ``SyncCore/NewestWinsPolicy`` in two ways:
/// it compares the exact integer milliseconds a delta carries rather than a
/// `Date`, and two versions equal in time and device are never replaced by
/// each other (the version held stays), where `NewestWinsPolicy` goes on to
/// compare their content.
///
/// The records of a ``SyncCore/Conflict`` Aquasync hands a policy are flat
/// deltas, as they travel: the model's fields plus the sync columns `gid`,
/// `deviceToken`, `localTimestamp` and `isDeleted`, with the record's
/// ``SyncCore/RecordVersion`` made of the time stamp and the device token.
/// This policy reads `localTimestamp` and `deviceToken` from the fields; for
/// records that lack them it compares their versions.
public struct AquasyncNewestWins: ConflictPolicy {
    /// Makes the policy.
    public init() {}

    /// Takes the remote version when it is newer by ``isNewer(_:than:)``, else keeps the local one.
    public func resolve(_ conflict: Conflict) async -> Resolution {
        Self.isNewer(conflict.remote, than: conflict.local) ? .takeRemote : .keepLocal
    }

    /// Whether `version` replaces `other` of the same record: a newer
    /// `localTimestamp`, or the same one and a greater `deviceToken`.
    public static func isNewer(_ version: Delta, than other: Delta) -> Bool {
        (version.localTimestamp, version.deviceToken) > (other.localTimestamp, other.deviceToken)
    }

    /// Whether `record` replaces `other`, by their `localTimestamp` and
    /// `deviceToken` columns when both carry them, else by their versions.
    public static func isNewer(_ record: SyncRecord, than other: SyncRecord) -> Bool {
        if let stamp = Self.stamp(of: record), let otherStamp = Self.stamp(of: other) {
            return stamp > otherStamp
        }
        return record.version > other.version
    }

    private static func stamp(of record: SyncRecord) -> (Int64, String)? {
        guard case .integer(let milliseconds)? = record.fields["localTimestamp"],
            case .string(let token)? = record.fields["deviceToken"]
        else { return nil }
        return (milliseconds, token)
    }
}

extension ConflictPolicy where Self == AquasyncNewestWins {
    /// Aquasync's rule, the newer `localTimestamp` then the greater `deviceToken`: `conflictPolicy: .aquasyncNewestWins`.
    public static var aquasyncNewestWins: AquasyncNewestWins { AquasyncNewestWins() }
}
