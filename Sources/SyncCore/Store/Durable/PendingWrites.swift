import FoundationEssentials
import SyncCore

/// One record write a transaction buffers until it commits.
enum PendingRecordWrite: Sendable {
    /// Insert or replace the record; `fields` is its fields already encoded.
    case put(SyncRecord, fields: Data)
    /// Remove the record without a tombstone.
    case purge
}

/// One metadata write a transaction buffers until it commits.
struct PendingMetadataWrite: Sendable {
    /// The new value, or `nil` to remove it.
    var value: SyncValue?
    /// `value` encoded, or `nil` to remove it.
    var blob: Data?
}

/// What a finished transaction writes, in the order to apply it.
struct PendingWrites: Sendable {
    /// Record writes in the order of each record's last write (positions are
    /// handed out in this order).
    var records: [(key: RecordKey, write: PendingRecordWrite)] = []
    /// Metadata writes by peer and key.
    var metadata: [(peer: PeerID, key: String, write: PendingMetadataWrite)] = []

    /// Whether there is nothing to commit.
    var isEmpty: Bool { records.isEmpty && metadata.isEmpty }
}
