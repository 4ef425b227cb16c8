#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One record write a transaction buffers until it commits.
package enum PendingRecordWrite: Sendable {
    /// Insert or replace the record, its fields already encoded.
    case put(EncodedRecord)
    /// Remove the record without a tombstone.
    case purge
}

/// One metadata write a transaction buffers until it commits.
package struct PendingMetadataWrite: Sendable {
    /// The new value, or `nil` to remove it.
    package var value: SyncValue?
    /// `value` encoded, or `nil` to remove it.
    package var blob: Data?

    /// A write of `value`, already encoded as `blob`; both `nil` to remove it.
    package init(value: SyncValue?, blob: Data?) {
        self.value = value
        self.blob = blob
    }
}

/// What a finished transaction writes, in the order to apply it.
package struct PendingWrites: Sendable {
    /// Record writes in the order of each record's last write (positions are
    /// handed out in this order).
    package var records: [(key: RecordKey, write: PendingRecordWrite)] = []
    /// Metadata writes by peer and key, applied after ``removedMetadataPrefixes``.
    package var metadata: [(peer: PeerID, key: String, write: PendingMetadataWrite)] = []
    /// Prefixes of the metadata keys to remove, by peer: every value of the peer whose key starts with
    /// the prefix (as UTF-8 bytes) goes, before ``metadata`` is written.
    package var removedMetadataPrefixes: [(peer: PeerID, prefix: String)] = []

    /// The keys of the records written (not purged).
    package var puts: [RecordKey] { records.compactMap { if case .put = $0.write { $0.key } else { nil } } }

    /// Whether there is nothing to commit.
    package var isEmpty: Bool { records.isEmpty && metadata.isEmpty && removedMetadataPrefixes.isEmpty }

    /// Nothing to write yet.
    package init() {}
}
