public import SyncCore

/// A record of an OTA dataclass as both sides keep it in their ``SyncStore``:
/// the collection is the dataclass (`com.apple.Contacts`), the id is the
/// server's UUID on the server and the device's LUID on a device, and the
/// fields are `entity` and `record`.
public struct OTARecord: Hashable, Sendable {
    /// The entity name, such as `com.apple.contacts.Contact`.
    public var entity: String
    /// The record's fields.
    public var fields: [String: SyncValue]

    /// Makes a record.
    public init(entity: String, fields: [String: SyncValue]) {
        self.entity = entity
        self.fields = fields
    }

    /// Reads a stored record's entity and fields.
    /// - Throws: ``StoreError`` (corrupt) when the record was not written by an OTA side.
    public init(_ record: SyncRecord) throws {
        guard case .string(let entity)? = record.fields["entity"], case .dictionary(let fields)? = record.fields["record"]
        else { throw StoreError(.corrupt, "\(record.key) is not an OTA record (entity and record fields)") }
        self.entity = entity
        self.fields = fields
    }

    /// The fields to store.
    public var storedFields: [String: SyncValue] { ["entity": .string(entity), "record": .dictionary(fields)] }

    /// The item that carries this record whole (RLD).
    public func item(_ operation: OTAItemOperation) -> OTAItem {
        OTAItem(operation: operation, entity: entity, record: fields)
    }
}
