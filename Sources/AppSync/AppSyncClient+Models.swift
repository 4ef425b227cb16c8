public import SyncCore

/// The typed API (``SyncCore/ModelRecords``, ``SyncCore/ObservableModelRecords``): a ``SyncCore/SyncModel``
/// is an appSync object type, its ``SyncCore/SyncModel/modelName`` the type's name and its `id` the
/// object's guid.
///
/// ```swift
/// try await client.save(Booking(pk: 101, guest: "Ada"))
/// try await client.sync()
/// for try await bookings in client.observe(Booking.self) { show(bookings) }
/// ```
extension AppSyncClient: ObservableModelRecords {
    /// The collection the objects of the type `kind` are stored in (`appsync/booking`).
    public nonisolated func collection(ofKind kind: String) -> CollectionID { StoredObject.collection(kind) }

    /// The fields of the object `id` of the type `kind`, or `nil` when there is none or it is deleted.
    public func storedFields(of kind: String, id: String) async throws -> [String: SyncValue]? {
        guard let object = try await object(kind, guid: id), !object.isDeleted else { return nil }
        return object.fields
    }

    /// Every live object of the type `kind`, in guid order.
    public func allStoredFields(of kind: String) async throws -> [(id: String, fields: [String: SyncValue])] {
        try await objects(kind).map { ($0.guid, $0.fields) }
    }

    /// Saves the object `id` of the type `kind`, journaled for the next sync.
    public func saveFields(_ fields: [String: SyncValue], of kind: String, id: String) async throws {
        try await save(kind, guid: id, fields: fields)
    }

    /// Soft-deletes the object `id` of the type `kind`, journaled for the next sync.
    public func deleteRecord(of kind: String, id: String) async throws {
        try await delete(kind, guid: id)
    }
}
