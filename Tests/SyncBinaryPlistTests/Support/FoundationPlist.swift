import Foundation
import SyncCore

/// Converts between ``SyncValue`` and the object graphs Foundation's
/// `PropertyListSerialization` reads and writes, so that Foundation can serve
/// as an independent binary plist implementation in the interop tests.
enum FoundationPlist {
    /// A value Foundation handed back that has no ``SyncValue`` form.
    struct Unconvertible: Error, CustomStringConvertible {
        var description: String
    }

    /// The Foundation object for `value` (`null` has none: plists cannot carry it).
    static func object(for value: SyncValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .bool(let flag): return flag
        case .integer(let integer): return NSNumber(value: integer)
        case .unsignedInteger(let integer): return NSNumber(value: integer)
        case .real(let real): return NSNumber(value: real)
        case .string(let string): return string
        case .date(let date): return date
        case .data(let data): return Data(data)
        case .array(let elements): return elements.map(object(for:))
        case .dictionary(let entries): return entries.mapValues(object(for:))
        }
    }

    /// The ``SyncValue`` for an object Foundation read.
    static func value(for object: Any) throws -> SyncValue {
        if type(of: object) == Bool.self, let flag = object as? Bool { return .bool(flag) }
        if let string = object as? String { return .string(string) }
        if let date = object as? Date { return .date(date) }
        if let data = object as? Data { return .data(Array(data)) }
        if let number = object as? NSNumber {
            switch String(cString: number.objCType) {
            case "c", "B": return .bool(number.boolValue)
            case "f", "d": return .real(number.doubleValue)
            case "Q", "L", "I", "S", "C": return .integer(exactly: number.uint64Value)
            default: return .integer(number.int64Value)
            }
        }
        if let array = object as? [Any] { return .array(try array.map(value(for:))) }
        if let dictionary = object as? [String: Any] { return .dictionary(try dictionary.mapValues(value(for:))) }
        throw Unconvertible(description: "no SyncValue for \(type(of: object)): \(object)")
    }

    /// The binary plist Foundation writes for `value`.
    static func encode(_ value: SyncValue) throws -> [UInt8] {
        Array(try PropertyListSerialization.data(fromPropertyList: object(for: value), format: .binary, options: 0))
    }

    /// The value Foundation reads from a binary plist, checking that it saw the binary format.
    static func decode(_ bytes: [UInt8]) throws -> SyncValue {
        var format = PropertyListSerialization.PropertyListFormat.xml
        let object = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: &format)
        guard format == .binary else { throw Unconvertible(description: "Foundation read the format \(format)") }
        return try value(for: object)
    }

    /// The XML plist Foundation writes for `value`, for size comparisons.
    static func encodeXML(_ value: SyncValue) throws -> [UInt8] {
        Array(try PropertyListSerialization.data(fromPropertyList: object(for: value), format: .xml, options: 0))
    }
}
