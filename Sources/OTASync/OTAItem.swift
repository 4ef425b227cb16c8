public import SyncCore

/// What an item of `sync-changes` does.
public enum OTAItemOperation: String, Hashable, Sendable {
    /// A new record.
    case add
    /// A changed record.
    case modify
    /// A deleted record.
    case delete
}

/// Whether `sync-changes` items carry whole records or changed fields.
public enum OTAItemType: String, Hashable, Sendable {
    /// Record-level differences (RLD): `record` holds every field.
    case records
    /// Field-level differences (FLD): `changes` holds the changed fields, `removed` the cleared ones.
    case changes
}

/// One item of a `sync-changes` command, keyed in `items` by the record's id.
///
/// ```swift
/// let item = OTAItem.add(entity: "com.apple.contacts.Contact", record: ["first name": "Ana"])
/// let command = OTACommand(name: "sync-changes", sequence: 2, params: [
///     "uri": "com.apple.Contacts", "itemtype": "records", "items": ["L-1": item.value],
/// ])
/// ```
public struct OTAItem: Hashable, Sendable {
    /// Add, modify or delete.
    public var operation: OTAItemOperation
    /// The entity name, such as `com.apple.contacts.Contact`.
    public var entity: String?
    /// RLD: every field (a field left out is cleared; ``noChange`` keeps it).
    public var record: [String: SyncValue]?
    /// FLD: the changed fields.
    public var changes: [String: SyncValue]?
    /// FLD: the cleared fields.
    public var removed: [String]?
    /// Set by a server that sends a conflict for the user to resolve: the device's version that lost.
    public var conflict: [String: SyncValue]?

    /// The value meaning "this field did not change and is not sent" (large images).
    public static let noChange: SyncValue = "+**no-change**+"

    /// Makes an item.
    public init(
        operation: OTAItemOperation, entity: String? = nil, record: [String: SyncValue]? = nil,
        changes: [String: SyncValue]? = nil, removed: [String]? = nil, conflict: [String: SyncValue]? = nil
    ) {
        self.operation = operation
        self.entity = entity
        self.record = record
        self.changes = changes
        self.removed = removed
        self.conflict = conflict
    }

    /// A new record, as RLD.
    public static func add(entity: String, record: [String: SyncValue]) -> OTAItem {
        OTAItem(operation: .add, entity: entity, record: record)
    }

    /// A deleted record.
    public static func delete(entity: String? = nil) -> OTAItem { OTAItem(operation: .delete, entity: entity) }

    /// Reads the item under `key` of `items`.
    /// - Throws: `E_ParamError` / `E_BadValue` / `E_MissingParam` with `param-name` = `items` and `param-key` = the id.
    public init(_ value: SyncValue, key: String, itemType: OTAItemType) throws(OTAMessageError) {
        func error(_ status: OTAStatus, _ detail: String) -> OTAMessageError {
            OTAMessageError(OTAResult(status, "items[\(key)]: \(detail)", paramName: "items", paramKey: key))
        }
        guard case .dictionary(let item) = value else { throw error(.paramError, "an item must be a dictionary") }
        let op: String
        switch item["op"] {
        case nil: throw error(.missingParam, "op is required")
        case .string(let name)?: op = name
        default: throw error(.paramError, "op must be a string")
        }
        guard let operation = OTAItemOperation(rawValue: op) else { throw error(.badValue, "unknown op '\(op)'") }
        self.operation = operation
        switch item["entity"] {
        case nil: entity = nil
        case .string(let entity)?: self.entity = entity
        default: throw error(.paramError, "entity must be a string")
        }
        switch item["conflict"] {
        case nil: conflict = nil
        case .dictionary(let conflict)?: self.conflict = conflict
        default: throw error(.paramError, "conflict must be a dictionary")
        }
        guard operation != .delete else { return }
        guard entity != nil || operation == .modify else { throw error(.missingParam, "entity is required for add") }
        switch itemType {
        case .records:
            guard case .dictionary(let record)? = item["record"] else {
                throw error(item["record"] == nil ? .missingParam : .paramError, "record must be a dictionary")
            }
            self.record = record
        case .changes:
            switch item["changes"] {
            case nil: changes = [:]
            case .dictionary(let changes)?: self.changes = changes
            default: throw error(.paramError, "changes must be a dictionary")
            }
            switch item["removed"] {
            case nil: removed = []
            case .array(let removed)?:
                var names: [String] = []
                for name in removed {
                    guard case .string(let name) = name else { throw error(.paramError, "removed must list field names") }
                    names.append(name)
                }
                self.removed = names
            default: throw error(.paramError, "removed must be an array")
            }
        }
    }

    /// The item as a value.
    public var value: SyncValue {
        var item: [String: SyncValue] = ["op": .string(operation.rawValue)]
        if let entity { item["entity"] = .string(entity) }
        if let record { item["record"] = .dictionary(record) }
        if let changes { item["changes"] = .dictionary(changes) }
        if let removed { item["removed"] = .array(removed.map(SyncValue.string)) }
        if let conflict { item["conflict"] = .dictionary(conflict) }
        return .dictionary(item)
    }

    /// The fields after this item is applied to `fields` (RLD replaces them,
    /// keeping those sent as ``noChange``; FLD changes and removes).
    public func applied(to fields: [String: SyncValue]) -> [String: SyncValue] {
        if let record {
            var result: [String: SyncValue] = [:]
            for (name, value) in record {
                if value == Self.noChange {
                    if let kept = fields[name] { result[name] = kept }
                } else {
                    result[name] = value
                }
            }
            return result
        }
        var result = fields
        for (name, value) in changes ?? [:] where value != Self.noChange { result[name] = value }
        for name in removed ?? [] { result[name] = nil }
        return result
    }
}
