#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SyncCore

/// The declared shape of one model, for a server that validates what it stores.
///
/// A server without models accepts any model and any fields. With models it
/// refuses unknown models, missing required fields and fields of the wrong
/// type (422), and it normalises values that a codec could only carry as
/// strings: an ISO 8601 string for a `.date` field becomes a date, a base64
/// string for a `.data` field becomes data, so a JSON device and a property
/// list device read back the same types.
///
/// ```swift
/// let contact = AquasyncModel("Contact", fields: ["name": .string, "born": .date], required: ["name"])
/// let server = AquasyncServer(store: store, models: [contact])
/// ```
public struct AquasyncModel: Sendable, Hashable {
    /// The model's name, as it appears in a DeltaPack.
    public var name: String
    /// The type of each known field.
    public var fields: [String: SyncValue.Kind]
    /// Fields every delta that is not a delete must carry.
    public var required: Set<String>
    /// Whether fields not in ``fields`` are refused.
    public var allowsOtherFields: Bool

    /// Makes a model.
    public init(
        _ name: String, fields: [String: SyncValue.Kind], required: Set<String> = [], allowsOtherFields: Bool = false
    ) {
        self.name = name
        self.fields = fields
        self.required = required
        self.allowsOtherFields = allowsOtherFields
    }

    /// Checks `delta`'s fields and returns it with values normalised to the declared types.
    /// - Throws: ``AquasyncValidationError`` for a missing, unknown or mistyped field.
    public func validate(_ delta: Delta, at path: String) throws(AquasyncValidationError) -> Delta {
        var delta = delta
        if !delta.isDeleted {
            for field in required.sorted() where delta.fields[field] == nil || delta.fields[field] == .null {
                throw AquasyncValidationError("\(path).\(field) is required for \(name)")
            }
        }
        for (field, value) in delta.fields {
            guard let kind = fields[field] else {
                if allowsOtherFields { continue }
                throw AquasyncValidationError("\(path).\(field) is not a field of \(name)")
            }
            delta.fields[field] = try Self.normalise(value, to: kind, at: "\(path).\(field)")
        }
        return delta
    }

    private static func normalise(_ value: SyncValue, to kind: SyncValue.Kind, at path: String)
        throws(AquasyncValidationError) -> SyncValue
    {
        if value.kind == kind || value == .null { return value }
        switch (kind, value) {
        case (.date, .string(let text)):
            if let date = parseISO8601(text) { return .date(date) }
        case (.data, .string(let text)):
            if let data = Data(base64Encoded: text) { return .data(Array(data)) }
        case (.real, .integer(let integer)):
            return .real(Double(integer))
        default:
            break
        }
        throw AquasyncValidationError("\(path) must be \(kind), not \(value.kind)")
    }

    private static func parseISO8601(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
