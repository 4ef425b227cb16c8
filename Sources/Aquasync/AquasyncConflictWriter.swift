#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// How Aquasync writes a conflict's decision: versions are stored deltas, and a version the device
/// writes again is stamped after the server's (``AquasyncNewestWins``) so that it supersedes it.
struct AquasyncConflictWriter: ConflictWriter {
    /// The device's token and the sync's time.
    var stamp: Stamp
    /// The server's version as it was pulled, stored as it came when the server holds the device's version.
    var pulled: EncodedRecord?

    /// The delta form of both versions, as ``AquasyncNewestWins`` and the other policies Aquasync hands
    /// conflicts to read them (the model's fields plus the sync columns).
    func conflict(between entry: JournalEntry, and remote: ServerVersion, in tx: any StoreTransaction) async throws -> Conflict {
        let model = try Self.model(of: entry.key)
        return Conflict(
            local: StoredDelta.record(try await mine(entry.local, in: tx), model: model),
            remote: StoredDelta.record(StoredDelta.delta(remote), model: model),
            base: entry.archCopy?.record, resolvingSide: .client)
    }

    func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
        try await tx.put(StoredDelta.record(StoredDelta.delta(remote), model: try Self.model(of: entry.key)))
    }

    func writeAgreement(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
        guard let pulled else { return try await writeServerVersion(remote, over: entry, in: tx) }
        try await tx.put(pulled)
    }

    func writeLocalVersion(
        _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
    ) async throws {
        let model = try Self.model(of: version.key)
        let (mine, theirs) = (try await mine(version, in: tx), StoredDelta.delta(remote))
        var written = mine
        if merged {
            written = Delta(merged: version, gid: mine.gid, deviceToken: stamp.deviceToken, after: mine, theirs)
        } else if !AquasyncNewestWins.isNewer(mine, than: theirs) {
            written.localTimestamp = Delta.timestamp(after: theirs.localTimestamp)
        }
        try await tx.put(StoredDelta.record(written, model: model))
        try await tx.journal.recordLocalChange(written.isDeleted ? .delete : .modify, local: StoredDelta.neutral(written, model: model), at: stamp.date, basedOn: nil)
    }

    func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
        let model = try Self.model(of: local.key)
        let mine = StoredDelta.delta(ServerVersion(record: local))
        var copy = mine.copied(as: TimeOrderedUUID.make().uuidString.lowercased(), deviceToken: stamp.deviceToken)
        copy.localTimestamp = max(stamp.now, mine.localTimestamp)
        try await tx.put(StoredDelta.record(copy, model: model))
        try await tx.journal.recordLocalChange(.add, local: StoredDelta.neutral(copy, model: model), at: stamp.date, basedOn: nil)
    }

    /// The device's delta of `local`'s item: the stored record (which holds the local version while its
    /// entry is pending), else the local version itself.
    private func mine(_ local: SyncRecord, in tx: any StoreTransaction) async throws -> Delta {
        if let stored = try await tx.record(local.key) { return try StoredDelta.delta(stored) }
        return StoredDelta.delta(ServerVersion(record: local))
    }

    /// The model of an Aquasync collection.
    private static func model(of key: RecordKey) throws -> String {
        guard let model = StoredDelta.model(of: key.collection) else {
            throw StoreError(.invalidArgument, "\(key.collection) is not a collection of Aquasync's")
        }
        return model
    }
}
