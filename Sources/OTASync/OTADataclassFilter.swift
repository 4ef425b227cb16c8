public import Foundation
public import SyncCore

/// What a device wants of a dataclass (`dataclass/<name>/filter`): the server
/// sends only the records the filter admits.
///
/// ```swift
/// let filter = OTADataclassFilter(constrainContainers: ["family", "work"], discardAfterDays: 30)
/// try await client.setFilter(filter, for: "com.apple.Contacts")
/// ```
///
/// Containers are compared as they are: a record's container is its
/// `container` field (a string), and the ids in the filter are the same
/// strings — use stable container ids such as group names. A record's age is
/// its `date` field.
public struct OTADataclassFilter: Hashable, Sendable {
    /// The container the server puts a record from the device into when it names none.
    public var defaultContainer: String?
    /// The containers whose records the device receives; nil or empty: all.
    public var constrainContainers: Set<String>?
    /// Records whose `date` is older than this many days are not sent.
    public var discardAfterDays: Int?

    /// Makes a filter.
    public init(defaultContainer: String? = nil, constrainContainers: Set<String>? = nil, discardAfterDays: Int? = nil) {
        self.defaultContainer = defaultContainer
        self.constrainContainers = constrainContainers
        self.discardAfterDays = discardAfterDays
    }

    /// Reads a filter's value.
    /// - Throws: `E_ParamError` for a key of the wrong type, `E_BadValue` for an unknown key
    ///   (`param-name` = `value`, `param-key` = the key).
    public init(_ value: [String: SyncValue]) throws(OTAMessageError) {
        for (key, field) in value {
            switch (key, field) {
            case ("default_container", .string(let container)): defaultContainer = container
            case ("discard_after_days", .integer(let days)) where days >= 0: discardAfterDays = Int(days)
            case ("constrain_containers", .array(let ids)) where ids.allSatisfy({ $0.stringValue != nil }):
                constrainContainers = Set(ids.compactMap(\.stringValue))
            case ("default_container", _), ("discard_after_days", _), ("constrain_containers", _):
                throw OTAMessageError(OTAResult(.paramError, "\(key) has the wrong type", paramName: "value", paramKey: key))
            default:
                throw OTAMessageError(OTAResult(.badValue, "unknown filter key \(key)", paramName: "value", paramKey: key))
            }
        }
    }

    /// The filter as the `value` of a `put`.
    public var value: [String: SyncValue] {
        var value: [String: SyncValue] = [:]
        if let defaultContainer { value["default_container"] = .string(defaultContainer) }
        if let constrainContainers { value["constrain_containers"] = .array(constrainContainers.sorted().map(SyncValue.string)) }
        if let discardAfterDays { value["discard_after_days"] = .integer(Int64(discardAfterDays)) }
        return value
    }

    /// Whether a device with this filter holds a record with these fields at `now`.
    public func admits(_ fields: [String: SyncValue], now: Date) -> Bool {
        if let constrainContainers, !constrainContainers.isEmpty {
            guard case .string(let container)? = fields["container"], constrainContainers.contains(container) else { return false }
        }
        if let discardAfterDays, case .date(let date)? = fields["date"],
            date < now.addingTimeInterval(-Double(discardAfterDays) * 86_400)
        {
            return false
        }
        return true
    }
}
