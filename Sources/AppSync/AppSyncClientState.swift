import SyncCore

/// Where an ``AppSyncClient`` keeps its counters: the metadata of the peer `appsync.client` in the device's store.
enum AppSyncClientState {
    static let peer: PeerID = "appsync.client"
    /// The client's counter: grows with every local change.
    static let counter = MetadataKey<Int64>("counter", peer: peer)

    /// The client's counter at its last upload of `type`.
    static func counterLastSync(_ type: String) -> MetadataKey<Int64> {
        MetadataKey("counter_lastsync/" + type, peer: peer)
    }

    /// Whether the changes an earlier version marked by counters in `type` were journaled.
    static func journalAdopted(_ type: String) -> MetadataKey<Bool> {
        MetadataKey("journal_adopted/" + type, peer: peer)
    }

    /// The server counter the downloads of `type` reached.
    static func serverCounterLastSync(_ type: String) -> MetadataKey<Int64> {
        MetadataKey("servercounter_lastsync/" + type, peer: peer)
    }
}
