public import SyncCore

/// The typed API (``SyncCore/ModelRecords``, ``SyncCore/ObservableModelRecords``): a ``SyncCore/SyncModel``
/// is an Aquasync model, its ``SyncCore/SyncModel/modelName`` the model's name and its `id` the record's
/// gid (a lowercase UUID).
///
/// ```swift
/// try await client.save(Contact(name: "Ada"))
/// try await client.sync()
/// for try await contacts in client.observe(Contact.self) { show(contacts) }
/// ```
extension AquasyncClient: ObservableModelRecords {
    /// The collection the records of the model `kind` are stored in (`aquasync/Contact`).
    public nonisolated func collection(ofKind kind: String) -> CollectionID { StoredDelta.collection(for: kind) }

    /// The fields of the record `id` of the model `kind`, or `nil` when there is none or it is deleted.
    public func storedFields(of kind: String, id: String) async throws -> [String: SyncValue]? {
        guard let object = try await object(kind, gid: id), !object.isDeleted else { return nil }
        return object.fields
    }

    /// Every live record of the model `kind`, in gid order.
    public func allStoredFields(of kind: String) async throws -> [(id: String, fields: [String: SyncValue])] {
        try await objects(kind).map { ($0.gid, $0.fields) }
    }

    /// Saves the record `id` of the model `kind`, journaled for the next sync.
    public func saveFields(_ fields: [String: SyncValue], of kind: String, id: String) async throws {
        try await save(kind, gid: id, fields: fields)
    }

    /// Soft-deletes the record `id` of the model `kind`, journaled for the next sync.
    public func deleteRecord(of kind: String, id: String) async throws {
        try await delete(kind, gid: id)
    }
}
