import Foundation
import SyncCore

/// Foundation's `PropertyListSerialization` as an independent XML property
/// list implementation, with conversions between its `Any` values and
/// ``SyncValue`` (for the tests only).
enum FoundationPlist {
    /// Reads an XML property list with Foundation.
    static func read(_ bytes: [UInt8]) throws -> SyncValue {
        var format = PropertyListSerialization.PropertyListFormat.binary
        let object = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: &format)
        guard format == .xml else { throw FoundationPlistFailure("Foundation read the input as \(format), not XML") }
        return try value(of: object)
    }

    /// Writes `value` as an XML property list with Foundation.
    static func write(_ value: SyncValue) throws -> [UInt8] {
        Array(try PropertyListSerialization.data(fromPropertyList: object(of: value), format: .xml, options: 0))
    }

    /// The ``SyncValue`` of a Foundation property list object.
    static func value(of object: Any) throws -> SyncValue {
        switch object {
        case let flag as Bool where type(of: object) == Bool.self:
            return .bool(flag)
        case let number as NSNumber:
            switch String(cString: number.objCType) {
            case "c", "B": return .bool(number.boolValue)
            case "f", "d": return .real(number.doubleValue)
            case "Q", "L", "I", "S", "C": return .integer(exactly: number.uint64Value)
            default: return .integer(number.int64Value)
            }
        case let string as String: return .string(string)
        case let date as Date: return .date(date)
        case let data as Data: return .data(Array(data))
        case let array as [Any]: return .array(try array.map(value(of:)))
        case let dictionary as [String: Any]:
            return .dictionary(try dictionary.mapValues(value(of:)))
        default:
            throw FoundationPlistFailure("Foundation returned a \(type(of: object)): \(object)")
        }
    }

    /// The Foundation property list object of a value.
    static func object(of value: SyncValue) throws -> Any {
        switch value {
        case .null: throw FoundationPlistFailure("property lists have no null")
        case .string(let string): return string
        case .integer(let integer): return NSNumber(value: integer)
        case .unsignedInteger(let integer): return NSNumber(value: integer)
        case .real(let real): return NSNumber(value: real)
        case .bool(let flag): return flag
        case .date(let date): return date
        case .data(let bytes): return Data(bytes)
        case .array(let elements): return try elements.map(object(of:))
        case .dictionary(let entries): return try entries.mapValues(object(of:))
        }
    }
}

/// Foundation answered something the tests cannot compare.
struct FoundationPlistFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
