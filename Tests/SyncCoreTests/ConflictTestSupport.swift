import FoundationEssentials
import SyncCore

/// Builds records and runs a policy from both sides of a sync.
enum ConflictTestSupport {
    /// A contact record changed at `seconds` by `node`.
    static func record(
        _ fields: [String: SyncValue], at seconds: TimeInterval, by node: PeerID, deleted: Bool = false
    ) -> SyncRecord {
        SyncRecord(
            collection: "contacts", id: "5f0c", fields: fields, isDeleted: deleted,
            version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: seconds), node: node))
    }

    /// The record a side ends with after `resolution`, or `nil` for keep-both and deferred.
    static func outcome(of resolution: Resolution, local: SyncRecord, remote: SyncRecord) -> SyncRecord? {
        switch resolution {
        case .keepLocal: local
        case .takeRemote: remote
        case .merged(let record): record
        case .keepBoth, .deferred: nil
        }
    }

    /// The resolutions on the server (holding `server`) and on the client (holding `client`).
    static func resolveOnBothSides(
        _ policy: some ConflictPolicy, server: SyncRecord, client: SyncRecord, base: SyncRecord? = nil
    ) async -> (server: Resolution, client: Resolution) {
        let onServer = await policy.resolve(Conflict(local: server, remote: client, base: base, resolvingSide: .server))
        let onClient = await policy.resolve(Conflict(local: client, remote: server, base: base, resolvingSide: .client))
        return (onServer, onClient)
    }

    /// The records the server and the client end with.
    static func outcomesOnBothSides(
        _ policy: some ConflictPolicy, server: SyncRecord, client: SyncRecord, base: SyncRecord? = nil
    ) async -> (server: SyncRecord?, client: SyncRecord?) {
        let (onServer, onClient) = await resolveOnBothSides(policy, server: server, client: client, base: base)
        return (
            outcome(of: onServer, local: server, remote: client),
            outcome(of: onClient, local: client, remote: server)
        )
    }
}
