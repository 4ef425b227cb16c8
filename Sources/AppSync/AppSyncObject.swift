#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SyncCore

/// An object type the server and clients sync: its name and the fields whose values make its primary key.
///
/// ```swift
/// let booking = AppSyncObjectType("booking", primaryKey: ["room", "date"])
/// ```
/// Two objects of a type that are not deleted never share a primary key: the
/// server refuses an upload that would make them, and a client that downloads
/// one resolves the clash into one object with its conflict policy.
public struct AppSyncObjectType: Sendable, Hashable {
    /// The name used in URLs: `/rest/{name}/list/…`.
    public var name: String
    /// The fields whose values together are unique among live objects; the seed's single `pk` field by default.
    public var primaryKey: [String]

    /// Makes a type.
    public init(_ name: String, primaryKey: [String] = ["pk"]) {
        self.name = name
        self.primaryKey = primaryKey
    }

    /// The object's primary key as one canonical string, or `nil` when it has none of the key's fields.
    public func primaryKeyValue(of object: AppSyncObject) -> String? {
        let parts = primaryKey.map { object.fields[$0].map(Self.canonical) ?? "" }
        return parts.allSatisfy(\.isEmpty) ? nil : parts.joined(separator: "\u{1F}")
    }

    private static func canonical(_ value: SyncValue) -> String {
        switch value {
        case .null: "n"
        case .string(let text): "s" + text
        case .integer(let integer): "i\(integer)"
        case .unsignedInteger(let integer): "i\(integer)"
        case .real(let real): real == real.rounded() && abs(real) < 1e15 ? "i\(Int64(real))" : "r\(real)"
        case .bool(let flag): flag ? "b1" : "b0"
        case .date(let date): "d\(date.timeIntervalSince1970)"
        case .data(let bytes): "x" + bytes.map { String($0, radix: 16) }.joined(separator: ".")
        case .array(let items): "a[" + items.map(canonical).joined(separator: ",") + "]"
        case .dictionary(let entries):
            "o{" + entries.sorted { $0.key < $1.key }.map { $0.key + ":" + canonical($0.value) }.joined(separator: ",") + "}"
        }
    }
}

/// One synced object: its guid, soft-delete flag, timestamps and the type's own fields (the primary key among them).
///
/// On the wire an object is a flat dictionary: `guid`, `isdeleted` (0/1),
/// `timestamp_created`, `timestamp_lastupdate`, and the fields. Timestamps
/// are whole seconds — a date value, or text in ISO 8601 (`2014-03-20T12:15:00Z`)
/// or the seed's `2014-03-20 13:15:00 CET` form. `counter_lastupdate`
/// never travels.
public struct AppSyncObject: Sendable, Hashable {
    /// The globally unique id (any UUID form; kept as sent).
    public var guid: String
    /// The type's fields, primary-key fields included.
    public var fields: [String: SyncValue]
    /// Whether the object is soft-deleted.
    public var isDeleted: Bool
    /// When the object was created.
    public var timestampCreated: Date
    /// When the object last changed; timestamp priority compares it.
    public var timestampLastUpdate: Date

    /// Makes an object.
    public init(guid: String, fields: [String: SyncValue], isDeleted: Bool = false, timestampCreated: Date,
        timestampLastUpdate: Date)
    {
        self.guid = guid
        self.fields = fields
        self.isDeleted = isDeleted
        self.timestampCreated = timestampCreated
        self.timestampLastUpdate = timestampLastUpdate
    }

    /// Field names the protocol uses, which a type's fields cannot.
    public static let protocolFields: Set<String> = [
        "guid", "isdeleted", "timestamp_created", "timestamp_lastupdate", "counter_lastupdate",
    ]

    /// The object's wire form.
    public var value: SyncValue { value(for: [.null]) }

    /// The object's wire form in a codec with `codecFeatures`: without its null fields when the codec
    /// cannot carry null (a property list), since a null field and a missing one mean the same
    /// (docs/protocols.md).
    public func value(for codecFeatures: CodecFeatures) -> SyncValue {
        var dictionary = codecFeatures.contains(.null) ? fields : fields.filter { $0.value != .null }
        dictionary["guid"] = .string(guid)
        dictionary["isdeleted"] = .integer(isDeleted ? 1 : 0)
        dictionary["timestamp_created"] = .date(timestampCreated)
        dictionary["timestamp_lastupdate"] = .date(timestampLastUpdate)
        return .dictionary(dictionary)
    }

    /// Reads an object from its wire form.
    /// - Throws: ``SyncCore/SyncServiceError`` 400 (bad request), naming the field that is missing or of
    ///   the wrong type: what a server answers such an object with.
    public init(_ value: SyncValue, at path: String) throws(SyncServiceError) {
        guard case .dictionary(var dictionary) = value else { throw .badRequest("\(path) is not an object") }
        guard case .string(let guid)? = dictionary.removeValue(forKey: "guid"), (1...64).contains(guid.utf8.count) else {
            throw .badRequest("\(path).guid must be a string of 1 to 64 characters")
        }
        self.guid = guid
        switch dictionary.removeValue(forKey: "isdeleted") {
        case nil, .null?: isDeleted = false
        case .integer(let flag)? where flag == 0 || flag == 1: isDeleted = flag == 1
        case .bool(let flag)?: isDeleted = flag
        case .string(let text)? where text == "0" || text == "1": isDeleted = text == "1"
        default: throw .badRequest("\(path).isdeleted must be 0 or 1")
        }
        timestampCreated = try Self.timestamp(dictionary.removeValue(forKey: "timestamp_created"), "timestamp_created", path)
        timestampLastUpdate = try Self.timestamp(
            dictionary.removeValue(forKey: "timestamp_lastupdate"), "timestamp_lastupdate", path)
        dictionary.removeValue(forKey: "counter_lastupdate")
        fields = dictionary
    }

    private static func timestamp(_ value: SyncValue?, _ name: String, _ path: String) throws(SyncServiceError) -> Date {
        switch value {
        case .date(let date)?: return date
        case .string(let text)?:
            if let date = AppSyncTimestamp.parse(text) { return date }
            throw .badRequest("\(path).\(name) '\(text)' is not a timestamp: use ISO 8601 or 2014-03-20 13:15:00 CET")
        case .integer(let seconds)?: return Date(timeIntervalSince1970: Double(seconds))
        case nil: throw .badRequest("\(path).\(name) is missing")
        default: throw .badRequest("\(path).\(name) must be a timestamp")
        }
    }
}

extension SyncClientError {
    /// The stack name appSync's refusals carry (``SyncCore/SyncClientError/stack``).
    static let appSyncStack = "appsync"

    /// A call the appSync client refuses by the protocol's rules, before anything is sent:
    /// ``SyncCore/SyncClientError/Code/refused``, stack `"appsync"`, with the status the protocol
    /// gives it (409 for a primary key another object holds, 404 for no such object or type, 400 for
    /// a protocol field) and `reason` as the message.
    static func appSync(status: Int, _ reason: String) -> SyncClientError {
        .refusal(stack: appSyncStack, status: status, reason: reason)
    }
}
