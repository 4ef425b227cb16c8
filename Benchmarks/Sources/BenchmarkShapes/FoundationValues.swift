import Foundation
public import SyncCore

/// Converts the sample values into the `Any` trees that Foundation's
/// `PropertyListSerialization` and `JSONSerialization` take.
public enum FoundationValues {
    /// A property-list tree: `Date` and `Data` stay native.
    public static func propertyList(_ value: SyncValue) -> Any {
        switch value {
        case .null: NSNull()
        case .string(let string): string
        case .integer(let integer): Int(integer)
        case .unsignedInteger(let integer): UInt(integer)
        case .real(let real): real
        case .bool(let bool): bool
        case .date(let date): date
        case .data(let bytes): Data(bytes)
        case .array(let array): array.map(propertyList)
        case .dictionary(let dictionary): dictionary.mapValues(propertyList)
        }
    }

    /// A JSON tree: dates as ISO 8601 strings and data as base64, as ``SyncJSON`` writes them.
    public static func json(_ value: SyncValue) -> Any {
        switch value {
        case .null: NSNull()
        case .string(let string): string
        case .integer(let integer): Int(integer)
        case .unsignedInteger(let integer): UInt(integer)
        case .real(let real): real
        case .bool(let bool): bool
        case .date(let date): date.formatted(.iso8601)
        case .data(let bytes): Data(bytes).base64EncodedString()
        case .array(let array): array.map(json)
        case .dictionary(let dictionary): dictionary.mapValues(json)
        }
    }
}
