#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// The objects an ``AppSyncClient`` keeps in the device's store, and their
/// journal: the application's saves and deletes, each written with its
/// journal entry in one transaction, the reads, the counters, and the local
/// changes the journal did not record (an earlier version's, or objects the
/// server lost). Every local change is written by ``writeLocalChange(_:replacing:action:type:at:basedOn:in:)``,
/// a conflict's too.
struct AppSyncDeviceObjects: Sendable {
    /// The device's store.
    let store: any SyncStore
    /// The account the objects live under.
    let account: AccountID
    /// The types the client syncs, by name.
    let types: [String: AppSyncObjectType]
    /// Stamps local changes.
    let clock: any WallClock

    /// The type named `name`.
    /// - Throws: ``SyncCore/SyncClientError`` (status 404) when the client does not sync it.
    func type(_ name: String) throws -> AppSyncObjectType {
        guard let type = types[name] else { throw SyncClientError.appSync(status: 404, "'\(name)' is not a type this client syncs") }
        return type
    }

    // MARK: The application's changes

    /// Creates or updates objects of a type as local changes, in one transaction (``AppSyncClient/save(_:_:)``).
    func save(_ typeName: String, _ objects: [(guid: String?, fields: [String: SyncValue])]) async throws -> [String] {
        let type = try self.type(typeName)
        for (_, fields) in objects {
            if let reserved = fields.keys.first(where: { AppSyncObject.protocolFields.contains($0) }) {
                throw SyncClientError.appSync(status: 400, "\(reserved) is a protocol field")
            }
        }
        let guids = objects.map { $0.guid ?? TimeOrderedUUID.make().uuidString }
        // A guid just made names no object and no journal entry: only the given ones are read ahead.
        let given = zip(objects, guids).filter { $0.0.guid != nil }.map { StoredObject.key(typeName, $0.1) }
        let made = zip(objects, guids).filter { $0.0.guid == nil }.map { StoredObject.key(typeName, $0.1) }
        let time = clock.now()
        try await store.transaction(for: account) { tx in
            try await tx.prefetch(given)
            try await tx.journal.prefetch(given)
            try await tx.assumeNeverWritten(made)
            try await tx.journal.assumeNoEntries(for: made)
            for (guid, (_, fields)) in zip(guids, objects) {
                let existing = try await tx.record(StoredObject.key(typeName, guid)).map { try StoredObject.object($0.record) }
                let now = Self.wholeSeconds(time)
                let object = AppSyncObject(
                    guid: guid, fields: fields, timestampCreated: existing?.timestampCreated ?? now, timestampLastUpdate: now)
                if let primaryKey = type.primaryKeyValue(of: object),
                    let owner = try await StoredObject.owner(of: primaryKey, type: typeName, in: tx), owner != guid
                {
                    throw SyncClientError.appSync(status: 409, "object \(owner) already has this primary key")
                }
                try await Self.writeLocalChange(
                    object, replacing: existing, action: existing == nil ? .add : .modify, type: type, at: time, in: tx)
            }
        }
        return guids
    }

    /// Soft-deletes an object as a local change (``AppSyncClient/delete(_:guid:)``).
    func delete(_ typeName: String, guid: String) async throws {
        let type = try self.type(typeName)
        let time = clock.now()
        try await store.transaction(for: account) { tx in
            guard let stored = try await tx.record(StoredObject.key(typeName, guid)) else {
                throw SyncClientError.appSync(status: 404, "no \(typeName) \(guid)")
            }
            let existing = try StoredObject.object(stored.record)
            var deleted = existing
            deleted.isDeleted = true
            deleted.timestampLastUpdate = Self.wholeSeconds(time)
            try await Self.writeLocalChange(deleted, replacing: existing, action: .delete, type: type, at: time, in: tx)
        }
    }

    // MARK: Reads

    /// The object `guid`, deleted or not.
    func object(_ typeName: String, guid: String) async throws -> AppSyncObject? {
        try await store.transaction(for: account) { tx in
            try await tx.record(StoredObject.key(typeName, guid)).map { try StoredObject.object($0.record) }
        }
    }

    /// The live objects of a type, in guid order.
    func objects(_ typeName: String) async throws -> [AppSyncObject] {
        try await store.transaction(for: account) { tx in
            var objects: [AppSyncObject] = []
            for try await stored in tx.allRecords(in: StoredObject.collection(typeName)) where !stored.record.isDeleted {
                objects.append(try StoredObject.object(stored.record))
            }
            return objects
        }
    }

    /// The client's counter and, for the type, `counter_lastsync` and `servercounter_lastsync` (``AppSyncClient/counters(_:)``).
    func counters(_ typeName: String) async throws -> (counter: Int64, counterLastSync: Int64, serverCounterLastSync: Int64) {
        try await store.transaction(for: account) { tx in
            (
                try await tx.metadata(AppSyncClientState.counter) ?? 0,
                try await tx.metadata(AppSyncClientState.counterLastSync(typeName)) ?? 0,
                try await tx.metadata(AppSyncClientState.serverCounterLastSync(typeName)) ?? 0
            )
        }
    }

    // MARK: Changes the journal did not record

    /// Journals, as new on this device, the objects of `type` the server did
    /// not list in a full download and no pending change will send.
    func journalObjects(of type: AppSyncObjectType, notIn listed: Set<String>) async throws {
        let time = clock.now()
        try await store.transaction(for: account) { tx in
            var missing: [AppSyncObject] = []
            for try await stored in tx.allRecords(in: StoredObject.collection(type.name))
            where !listed.contains(stored.record.id.rawValue) {
                missing.append(try StoredObject.object(stored.record))
            }
            for object in missing where try await tx.journal.entry(for: StoredObject.key(type.name, object.guid)) == nil {
                try await tx.journal.recordLocalChange(
                    object.isDeleted ? .delete : .add, local: StoredObject.neutral(object, type: type.name, node: StoredObject.clientNode),
                    at: time, basedOn: nil)
            }
        }
    }

    /// Journals, once per type, the changes a store written by an earlier
    /// version of this client marked by counters alone (`counter_lastupdate`
    /// above `counter_lastsync`). They have no ArchCopy: the server's
    /// version, if one comes, is a conflict unless it holds the same.
    func journalCounterMarkedChanges(_ type: AppSyncObjectType) async throws {
        try await store.transaction(for: account) { tx in
            let adopted = AppSyncClientState.journalAdopted(type.name)
            guard try await tx.metadata(adopted) != true else { return }
            let lastSync = try await tx.metadata(AppSyncClientState.counterLastSync(type.name)) ?? 0
            var marked: [SyncRecord] = []
            for try await stored in tx.allRecords(in: StoredObject.collection(type.name)) {
                if let counter = stored.record.fields["counter_lastupdate"]?.integerValue, counter > lastSync {
                    marked.append(stored.record)
                }
            }
            for record in marked where try await tx.journal.entry(for: record.key) == nil {
                let object = try StoredObject.object(record)
                try await tx.put(StoredObject.record(object, type: type.name))
                try await tx.journal.recordLocalChange(
                    object.isDeleted ? .delete : .modify, local: StoredObject.neutral(object, type: type.name, node: StoredObject.clientNode),
                    at: object.timestampLastUpdate, basedOn: nil)
            }
            try await tx.setMetadata(true, adopted)
        }
    }

    // MARK: Writing a local change

    /// Writes `object` as a local change and journals it in `tx`: both are
    /// stored, or neither. `held` is the server's version the device holds
    /// (the stored object, `previous`, unless told otherwise; it counts only
    /// when no change of the object is pending).
    static func writeLocalChange(
        _ object: AppSyncObject, replacing previous: AppSyncObject?, action: JournalAction, type: AppSyncObjectType,
        at time: Date, basedOn held: ServerVersion?? = nil, in tx: any StoreTransaction
    ) async throws {
        try await StoredObject.put(object, replacing: previous, type: type, in: tx)
        try await tx.setMetadata((try await tx.metadata(AppSyncClientState.counter) ?? 0) + 1, AppSyncClientState.counter)
        try await tx.journal.recordLocalChange(
            action, local: StoredObject.neutral(object, type: type.name, node: StoredObject.clientNode), at: time,
            basedOn: held ?? previous.map { StoredObject.serverVersion($0, type: type.name) })
    }

    /// A `timestamp_lastupdate` for a local version that overrides `remote`:
    /// the device's time, and at least a second after the server's version,
    /// so that timestamp priority on other devices keeps it whatever the clocks' skew.
    static func superseding(_ remote: AppSyncObject, at time: Date) -> Date {
        max(wholeSeconds(time), wholeSeconds(remote.timestampLastUpdate.addingTimeInterval(1)))
    }

    /// `date` cut to the whole second: appSync's timestamps have no fractions.
    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}
