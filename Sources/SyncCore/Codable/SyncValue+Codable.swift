#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `SyncValue` is `Codable`, so typed messages can hold free-form parts such
/// as a record's fields:
///
/// ```swift
/// struct RecordChange: Codable {
///     var id: RecordID
///     var fields: [String: SyncValue]
/// }
/// ```
///
/// ``SyncValueEncoder`` and ``SyncValueDecoder`` pass a `SyncValue` through
/// unchanged. Other coders (`JSONEncoder`, `PropertyListEncoder`) see the
/// Swift value of each case: a date and data then take whatever form that
/// coder gives them, and come back as what that form decodes as.
extension SyncValue: Codable {
    /// Encodes the value of the case: `nil`, a string, a number, a Boolean, a
    /// `Date`, `Data`, an array or a dictionary.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .string(let string): try container.encode(string)
        case .integer(let integer): try container.encode(integer)
        case .unsignedInteger(let integer): try container.encode(integer)
        case .real(let real): try container.encode(real)
        case .bool(let bool): try container.encode(bool)
        case .date(let date): try container.encode(date)
        case .data(let bytes): try container.encode(Data(bytes))
        case .array(let elements): try container.encode(elements)
        case .dictionary(let entries): try container.encode(entries)
        }
    }

    /// Decodes whichever case the decoder holds: null, a Boolean, an integer,
    /// a real, a string, a dictionary or an array, in that order of trial.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the value is none of those.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let integer = try? container.decode(UInt64.self) {
            self = .integer(exactly: integer)
        } else if let real = try? container.decode(Double.self) {
            self = .real(real)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let entries = try? container.decode([String: SyncValue].self) {
            self = .dictionary(entries)
        } else if let elements = try? container.decode([SyncValue].self) {
            self = .array(elements)
        } else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "The value is not one SyncValue can hold"))
        }
    }
}
