public import SyncCore

/// A ``SyncCore/SyncModel`` whose records are OTA records: its ``SyncCore/SyncModel/modelName`` is the
/// entity (`com.apple.contacts.Contact`), its `id` the record's LUID, and it names its dataclass.
///
/// ```swift
/// struct Person: OTAModel {
///     static let dataclass = "com.apple.Contacts"
///     static let modelName = "com.apple.contacts.Contact"
///     var id = OTADeviceRecords.makeLUID()
///     var firstName: String
///     enum CodingKeys: String, CodingKey { case id, firstName = "first name" }
/// }
/// try await records.save(Person(firstName: "Ana"))
/// ```
public protocol OTAModel: SyncModel {
    /// The dataclass the records belong to (`com.apple.Contacts`).
    static var dataclass: String { get }
}

/// The typed API over a device's OTA records, with the rules of ``SyncCore/ModelFields``: fields the type
/// does not declare survive its save, and a field it cannot read is a ``SyncCore/ModelDecodingError``.
extension OTADeviceRecords {
    /// A new LUID, as ``save(dataclass:luid:entity:fields:)`` makes one.
    public static func makeLUID() -> String { newLUID() }

    /// Saves `model` — a new record, or over the one with its LUID — journaled for the next sync.
    public func save<Model: OTAModel>(_ model: Model) async throws {
        let stored = try await storedRecord(Model.self, luid: model.id)
        try await save(
            dataclass: Model.dataclass, luid: model.id, entity: Model.modelName,
            fields: ModelFields.fields(of: model, over: stored?.fields))
    }

    /// The record `id` as a `Model`, or `nil` when there is none, it is deleted, or it is of another entity.
    /// - Throws: ``SyncCore/ModelDecodingError`` when the record holds a field the type cannot read.
    public func model<Model: OTAModel>(_ type: Model.Type, id: String) async throws -> Model? {
        guard let record = try await storedRecord(Model.self, luid: id), record.entity == Model.modelName else { return nil }
        return try ModelFields.model(Model.self, id: id, fields: record.fields)
    }

    /// The live records of the model's dataclass whose entity is the model's, in LUID order.
    public func all<Model: OTAModel>(_ type: Model.Type) async throws -> [Model] {
        try await records(dataclass: Model.dataclass).filter { $0.value.entity == Model.modelName }.sorted { $0.key < $1.key }
            .map { try ModelFields.model(Model.self, id: $0.key, fields: $0.value.fields) }
    }

    /// Deletes the record `id` of the model's dataclass, journaled for the next sync.
    public func delete<Model: OTAModel>(_ type: Model.Type, id: String) async throws {
        try await delete(dataclass: Model.dataclass, luid: id)
    }

    /// The model's records now and after every change to them, as
    /// ``SyncCore/ObservableModelRecords/observe(_:where:)`` describes.
    public func observe<Model: OTAModel>(
        _ type: Model.Type, where isIncluded: @escaping @Sendable (Model) -> Bool = { _ in true }
    ) -> ModelObservation<Model> {
        ModelObservation(
            store: store, account: account, collection: CollectionID(Model.dataclass),
            read: { [self] in try await all(Model.self).filter(isIncluded) })
    }

    /// The live record `luid` of the model's dataclass, or `nil`.
    private func storedRecord<Model: OTAModel>(_ type: Model.Type, luid: String) async throws -> OTARecord? {
        try await store.transaction(for: account) { tx in
            guard let stored = try await tx.record(RecordKey(collection: CollectionID(Model.dataclass), id: RecordID(luid))),
                !stored.record.isDeleted
            else { return nil }
            return try OTARecord(stored.record)
        }
    }
}

/// The typed API through the client, as the other stacks' clients offer it: each call goes to the
/// client's ``OTAClient/records``.
extension OTAClient {
    /// Saves `model` as ``OTADeviceRecords/save(_:)`` does.
    public func save<Model: OTAModel>(_ model: Model) async throws { try await records.save(model) }

    /// The record `id` as a `Model`, as ``OTADeviceRecords/model(_:id:)`` reads it.
    public func model<Model: OTAModel>(_ type: Model.Type, id: String) async throws -> Model? {
        try await records.model(type, id: id)
    }

    /// The model's live records, as ``OTADeviceRecords/all(_:)`` lists them.
    public func all<Model: OTAModel>(_ type: Model.Type) async throws -> [Model] { try await records.all(type) }

    /// Deletes the record `id`, as ``OTADeviceRecords/delete(_:id:)`` does.
    public func delete<Model: OTAModel>(_ type: Model.Type, id: String) async throws { try await records.delete(type, id: id) }

    /// The model's records now and after every change, as ``OTADeviceRecords/observe(_:where:)`` gives them.
    public func observe<Model: OTAModel>(
        _ type: Model.Type, where isIncluded: @escaping @Sendable (Model) -> Bool = { _ in true }
    ) -> ModelObservation<Model> {
        records.observe(type, where: isIncluded)
    }
}
