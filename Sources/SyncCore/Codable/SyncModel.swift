#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `Codable` type whose values are the records of one kind: what a client's typed API saves, reads,
/// lists and deletes (`try await client.save(contact)`, `try await client.all(Contact.self)`).
///
/// ```swift
/// struct Contact: SyncModel {
///     static let modelName = "Contact"            // Aquasync's model, appSync's object type
///     var id = TimeOrderedUUID.makeID()
///     var name: String
///     var born: Date?
///     var emails: [String] = []
/// }
/// ```
///
/// ``id`` is the record's id in its stack (Aquasync's gid and appSync's guid: a lowercase UUID); it is
/// not a field. The other properties are the record's fields, as ``SyncValueEncoder`` writes them — see
/// ``ModelFields`` for the rules: dates, data, nested values, optionals, and fields the type does not know,
/// which survive a read-modify-save.
public protocol SyncModel: Codable, Sendable {
    /// The name the stack knows these records by: Aquasync's model, appSync's object type.
    static var modelName: String { get }
    /// The record's id in its stack; not one of its fields.
    var id: String { get }
}

/// How a ``SyncModel`` becomes a record's fields and back.
///
/// - Every stored property but `id` is a field, under its coding key, as ``SyncValueEncoder`` writes it:
///   `Date` a date, `Data` data, nested structs dictionaries, arrays arrays, enums their raw value.
/// - A `nil` optional removes the field: the record then has no such field, which reads back as `nil`
///   (property lists cannot carry a null). A stored `null` reads as `nil` too.
/// - A field the type does not declare is kept: saving a model starts from the fields the record
///   holds and replaces only those the type declares, so an app that knows fewer fields (an older
///   version) does not erase what a newer one wrote. Only the top level is merged: a nested struct is
///   replaced whole.
/// - A field the type cannot read (a string where it expects a number, a field it needs that is missing)
///   is a ``ModelDecodingError`` naming the record and the field; never a crash.
public enum ModelFields {
    /// The fields that saving `model` over a record holding `stored` (`nil` for a new record) leaves.
    /// - Throws: `EncodingError` when the model does not encode as a keyed container, or what its
    ///   `encode(to:)` throws.
    public static func fields<Model: SyncModel>(of model: Model, over stored: [String: SyncValue]?) throws -> [String: SyncValue] {
        let encoded = try SyncValueEncoder(nilEncodingStrategy: .null).encode(model)
        guard case .dictionary(let declared) = encoded else {
            throw EncodingError.invalidValue(
                model, .init(codingPath: [], debugDescription: "\(Model.self) must encode as a keyed container (a struct or class)"))
        }
        var fields = stored ?? [:]
        for (name, value) in declared where name != "id" {
            if case .null = value { fields[name] = nil } else { fields[name] = withoutNullFields(value) }
        }
        return fields
    }

    /// `value` with every dictionary entry that is `null` left out, at any depth (a `nil` optional of a
    /// nested struct is an absent key there too); nulls in arrays stay, holding their places.
    static func withoutNullFields(_ value: SyncValue) -> SyncValue {
        switch value {
        case .dictionary(let entries):
            var kept: [String: SyncValue] = [:]
            for (key, entry) in entries {
                if case .null = entry { continue }
                kept[key] = withoutNullFields(entry)
            }
            return .dictionary(kept)
        case .array(let elements):
            return .array(elements.map(withoutNullFields))
        default:
            return value
        }
    }

    /// The model a record's fields hold.
    /// - Parameters:
    ///   - type: The model type.
    ///   - id: The record's id.
    ///   - fields: The record's fields.
    /// - Throws: ``ModelDecodingError`` naming the record and the field the type cannot read.
    public static func model<Model: SyncModel>(_ type: Model.Type, id: String, fields: [String: SyncValue]) throws(ModelDecodingError)
        -> Model
    {
        var value = fields
        value["id"] = .string(id)
        do {
            return try SyncValueDecoder().decode(Model.self, from: .dictionary(value))
        } catch let error as DecodingError {
            throw ModelDecodingError(model: Model.modelName, id: id, error)
        } catch {
            throw ModelDecodingError(model: Model.modelName, id: id, field: "", reason: "\(error)")
        }
    }
}

/// A record a ``SyncModel`` cannot read: which record, which field, and why.
public struct ModelDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The model's name (``SyncModel/modelName``).
    public var model: String
    /// The record's id.
    public var id: String
    /// The field, as a path (`address.zip`, `emails[2]`); empty when the record as a whole is wrong.
    public var field: String
    /// Why, in a few words.
    public var reason: String

    /// Makes an error.
    public init(model: String, id: String, field: String, reason: String) {
        self.model = model
        self.id = id
        self.field = field
        self.reason = reason
    }

    init(model: String, id: String, _ error: DecodingError) {
        func path(_ keys: [any CodingKey]) -> String {
            keys.reduce(into: "") { text, key in
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
        }
        switch error {
        case .typeMismatch(let type, let context):
            self.init(model: model, id: id, field: path(context.codingPath), reason: "expected \(type): \(context.debugDescription)")
        case .valueNotFound(let type, let context):
            self.init(model: model, id: id, field: path(context.codingPath), reason: "no \(type) value: \(context.debugDescription)")
        case .keyNotFound(let key, let context):
            self.init(model: model, id: id, field: path(context.codingPath + [key]), reason: "the record has no such field")
        case .dataCorrupted(let context):
            self.init(model: model, id: id, field: path(context.codingPath), reason: context.debugDescription)
        @unknown default:
            self.init(model: model, id: id, field: "", reason: "\(error)")
        }
    }

    /// `Contact 0191…: field "born": expected Date: …`.
    public var description: String {
        field.isEmpty
            ? "\(model) \(id) cannot be read: \(reason)"
            : "\(model) \(id): field \"\(field)\" cannot be read: \(reason)"
    }
}

/// The records of a client by kind and id, as fields: what every stack's client offers, and what the
/// typed API (``save(_:)``, ``model(_:id:)``, ``all(_:)``, ``delete(_:id:)``) is built on.
public protocol ModelRecords: Sendable {
    /// The fields of the record `id` of `kind`, or `nil` when there is none or it is deleted.
    func storedFields(of kind: String, id: String) async throws -> [String: SyncValue]?
    /// Every record of `kind` that is not deleted, with its id, in id order.
    func allStoredFields(of kind: String) async throws -> [(id: String, fields: [String: SyncValue])]
    /// Saves the record `id` of `kind` with `fields` (replacing the fields it had) and journals the change.
    func saveFields(_ fields: [String: SyncValue], of kind: String, id: String) async throws
    /// Deletes the record `id` of `kind` and journals the change.
    func deleteRecord(of kind: String, id: String) async throws
}

extension ModelRecords {
    /// Saves `model` — a new record, or over the one with its id — and journals the change for the next
    /// sync. Fields the record holds that the type does not declare are kept (``ModelFields``).
    public func save<Model: SyncModel>(_ model: Model) async throws {
        let stored = try await storedFields(of: Model.modelName, id: model.id)
        try await saveFields(ModelFields.fields(of: model, over: stored), of: Model.modelName, id: model.id)
    }

    /// The record `id` as a `Model`, or `nil` when there is none or it is deleted.
    /// - Throws: ``ModelDecodingError`` when the record holds a field the type cannot read.
    public func model<Model: SyncModel>(_ type: Model.Type, id: String) async throws -> Model? {
        guard let fields = try await storedFields(of: Model.modelName, id: id) else { return nil }
        return try ModelFields.model(Model.self, id: id, fields: fields)
    }

    /// Every record of the model that is not deleted, in id order.
    /// - Throws: ``ModelDecodingError`` for the first record the type cannot read.
    public func all<Model: SyncModel>(_ type: Model.Type) async throws -> [Model] {
        try await allStoredFields(of: Model.modelName).map { try ModelFields.model(Model.self, id: $0.id, fields: $0.fields) }
    }

    /// Deletes the record `id` of the model and journals the change.
    public func delete<Model: SyncModel>(_ type: Model.Type, id: String) async throws {
        try await deleteRecord(of: Model.modelName, id: id)
    }
}
