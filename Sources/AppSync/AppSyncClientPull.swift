#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// The download of one sync of an ``AppSyncClient``: the changes of a type
/// since `servercounter_lastsync`, page by page (``SyncCore/PagedPull``),
/// each page written in one transaction with the counter it reached. A
/// downloaded object with a pending change goes to the journal's judgement,
/// and one whose primary key a different local object holds is settled at once.
struct AppSyncClientPull {
    let client: AppSyncClient

    /// What writing one downloaded object did.
    private enum Applied { case unchanged, written, conflict(wrote: Bool) }

    /// Downloads the changes of `type` since `servercounter_lastsync`.
    /// - Returns: the guids the server listed.
    @discardableResult
    func run(_ type: AppSyncObjectType, into report: inout AppSyncClient.Report) async throws -> Set<String> {
        let (store, account, policy) = (client.store, client.account, client.configuration.conflictPolicy)
        let (endpoint, basePath) = (client.endpoint, client.configuration.basePath)
        var listed: Set<String> = []
        try await PagedPull.run(from: try await client.device.counters(type.name).serverCounterLastSync) {
            (from: Int64) -> (page: AppSyncMessages.ListAnswer, next: Int64?)? in
            let answer = try await endpoint.send(
                endpoint.request(.get, "\(basePath)/\(type.name)/list/\(from)"), as: AppSyncMessages.ListAnswer.self)
            return (page: answer, next: answer.result.more == true ? answer.result.servercounter : nil)
        } apply: { (answer: AppSyncMessages.ListAnswer) in
            let remote = answer.objects
            listed.formUnion(remote.map(\.guid))
            let serverCounter = answer.result.servercounter
            let time = client.configuration.clock.now()
            let (downloaded, conflicts) = try await store.transaction(for: account) { tx in
                var downloaded = 0
                var conflicts = 0
                let keys = remote.map { StoredObject.key(type.name, $0.guid) }
                try await tx.prefetch(keys)
                try await tx.journal.prefetch(keys)
                for object in remote {
                    switch try await Self.applyDownloaded(object, type: type, policy: policy, at: time, in: tx) {
                    case .unchanged: break
                    case .written: downloaded += 1
                    case .conflict(let wrote):
                        conflicts += 1
                        if wrote { downloaded += 1 }
                    }
                }
                try await tx.setMetadata(serverCounter, AppSyncClientState.serverCounterLastSync(type.name))
                return (downloaded, conflicts)
            }
            report.downloaded += downloaded
            report.conflicts += conflicts
        }
        return listed
    }

    /// Writes one downloaded object: over the local one, through the journal when a change of it is
    /// pending, or settling the primary-key clash with a different local object.
    private static func applyDownloaded(
        _ remote: AppSyncObject, type: AppSyncObjectType, policy: any ConflictPolicy, at time: Date,
        in tx: any StoreTransaction
    ) async throws -> Applied {
        let key = StoredObject.key(type.name, remote.guid)
        if let stored = try await tx.record(key) {
            let local = try StoredObject.object(stored.record)
            if let entry = try await tx.journal.entry(for: key) {
                return try await applyDownloaded(remote, over: local, pending: entry, type: type, policy: policy, at: time, in: tx)
            }
            if local == remote { return .unchanged }
            try await StoredObject.put(remote, replacing: local, type: type, in: tx)
            return .written
        }
        if !remote.isDeleted, let primaryKey = type.primaryKeyValue(of: remote),
            let owner = try await StoredObject.owner(of: primaryKey, type: type.name, in: tx),
            let ownerStored = try await tx.record(StoredObject.key(type.name, owner))
        {
            let holder = try StoredObject.object(ownerStored.record)
            try await settlePrimaryKeyClash(remote, heldBy: holder, type: type, policy: policy, at: time, in: tx)
            return .conflict(wrote: true)
        }
        try await StoredObject.put(remote, replacing: nil, type: type, in: tx)
        return .written
    }

    /// Applies the server's version of an object that has a pending local
    /// change, as the journal judges it (``SyncCore/SyncJournal/take(_:pending:policy:writer:)``):
    /// exactly a conflict when the server's version moved away from the ArchCopy to something else
    /// than the local version.
    private static func applyDownloaded(
        _ remote: AppSyncObject, over local: AppSyncObject, pending entry: JournalEntry, type: AppSyncObjectType,
        policy: any ConflictPolicy, at time: Date, in tx: any StoreTransaction
    ) async throws -> Applied {
        let incoming = StoredObject.serverVersion(remote, type: type.name)
        let writer = AppSyncClient.ConflictWriting(type: type, time: time, downloaded: remote)
        let outcome = try await tx.journal.take(incoming, pending: entry, policy: policy, writer: writer)
        switch outcome {
        case .unchanged, .stillOpen: return .unchanged
        case .agreed: return local == remote ? .unchanged : .written
        case .decided, .opened: return .conflict(wrote: outcome.wroteServerVersion)
        }
    }

    /// Settles a downloaded live object whose primary key a different local
    /// object holds: one object under the server's guid is left, and the local
    /// one is soft-deleted as a local change. A primary key cannot be held
    /// twice, so keep-both and ask-the-user take the server's fields.
    private static func settlePrimaryKeyClash(
        _ remote: AppSyncObject, heldBy holder: AppSyncObject, type: AppSyncObjectType, policy: any ConflictPolicy,
        at time: Date, in tx: any StoreTransaction
    ) async throws {
        let holderKey = StoredObject.key(type.name, holder.guid)
        let resolution = await policy.resolve(
            Conflict(
                local: StoredObject.neutral(holder, type: type.name, node: StoredObject.clientNode),
                remote: StoredObject.neutral(remote, type: type.name, node: StoredObject.serverNode),
                base: try await tx.journal.entry(for: holderKey)?.archCopy?.record, resolvingSide: .client))
        var retired = holder
        retired.isDeleted = true
        retired.timestampLastUpdate = max(holder.timestampLastUpdate, AppSyncDeviceObjects.wholeSeconds(time))
        try await AppSyncDeviceObjects.writeLocalChange(retired, replacing: holder, action: .delete, type: type, at: time, in: tx)
        switch resolution {
        case .takeRemote, .keepBoth, .deferred:
            try await StoredObject.put(remote, replacing: nil, type: type, in: tx)
        case .keepLocal, .merged:
            var object = remote
            if case .merged(let merged) = resolution {
                object.fields = merged.fields.filter { !AppSyncObject.protocolFields.contains($0.key) }
            } else {
                object.fields = holder.fields
            }
            object.timestampLastUpdate = AppSyncDeviceObjects.superseding(remote, at: time)
            try await AppSyncDeviceObjects.writeLocalChange(
                object, replacing: nil, action: .modify, type: type, at: time,
                basedOn: StoredObject.serverVersion(remote, type: type.name), in: tx)
        }
    }
}
