#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

extension AppSyncClient {
    /// How appSync writes a conflict's decision: objects keep their `timestamp_created`, a version the
    /// device writes again is stamped at least a second after the server's, and a primary key is held
    /// by one object only.
    struct ConflictWriting: ConflictWriter {
        var type: AppSyncObjectType
        /// The sync's time.
        var time: Date
        /// The object as the server sent it, when the decision is taken during a download.
        var downloaded: AppSyncObject?

        func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
            let local = try await storedObject(entry.key, in: tx)
            let theirs = StoredObject.object(remote, created: local?.timestampCreated ?? remote.record.version.modifiedAt)
            try await StoredObject.put(theirs, replacing: local, type: type, in: tx)
        }

        /// The server holds what the device holds: its timestamps are taken, so that every device keeps the same object.
        func writeAgreement(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
            guard let downloaded else { return try await writeServerVersion(remote, over: entry, in: tx) }
            let local = try await storedObject(entry.key, in: tx)
            guard local != downloaded else { return }
            try await StoredObject.put(downloaded, replacing: local, type: type, in: tx)
        }

        func writeLocalVersion(
            _ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction
        ) async throws {
            guard let local = try await storedObject(version.key, in: tx) else { return }
            var mine = local
            if merged {
                mine.fields = version.fields.filter { !AppSyncObject.protocolFields.contains($0.key) }
                mine.isDeleted = false
            }
            mine.timestampLastUpdate = AppSyncDeviceObjects.superseding(
                StoredObject.object(remote, created: local.timestampCreated), at: time)
            try await AppSyncDeviceObjects.writeLocalChange(
                mine, replacing: local, action: mine.isDeleted ? .delete : .modify, type: type, at: time, basedOn: remote, in: tx)
        }

        func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
            let now = AppSyncDeviceObjects.wholeSeconds(time)
            let copy = AppSyncObject(
                guid: TimeOrderedUUID.make().uuidString, fields: local.fields, timestampCreated: now, timestampLastUpdate: now)
            try await AppSyncDeviceObjects.writeLocalChange(copy, replacing: nil, action: .add, type: type, at: time, basedOn: nil, in: tx)
        }

        /// Not when both are live and hold the same primary key, which a type cannot hold twice.
        func canKeepBoth(_ entry: JournalEntry, and remote: ServerVersion, in tx: any StoreTransaction) async throws -> Bool {
            guard !entry.local.isDeleted, !remote.record.isDeleted, let local = try await storedObject(entry.key, in: tx),
                let primaryKey = type.primaryKeyValue(of: local)
            else { return true }
            return type.primaryKeyValue(of: StoredObject.object(remote, created: local.timestampCreated)) != primaryKey
        }

        private func storedObject(_ key: RecordKey, in tx: any StoreTransaction) async throws -> AppSyncObject? {
            try await tx.record(key).map { try StoredObject.object($0.record) }
        }
    }
}
