#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Converts one ``SyncValue`` to a scalar Swift type, with the leniencies
/// ``SyncValueDecoder`` documents, or throws a `DecodingError` at `path`.
enum SyncScalarDecoding {
    static func bool(_ value: SyncValue, at path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        if case .bool(let bool) = value { return bool }
        throw SyncDecodingErrors.mismatch(Bool.self, expected: "a Boolean", found: value, at: path())
    }

    static func string(_ value: SyncValue, at path: @autoclosure () -> [any CodingKey]) throws -> String {
        if case .string(let string) = value { return string }
        throw SyncDecodingErrors.mismatch(String.self, expected: "a string", found: value, at: path())
    }

    static func integer<Integer: FixedWidthInteger>(
        _ type: Integer.Type, _ value: SyncValue, at path: @autoclosure () -> [any CodingKey]
    ) throws -> Integer {
        switch value {
        case .integer(let integer):
            if let exact = Integer(exactly: integer) { return exact }
            throw SyncDecodingErrors.corrupted("The integer \(integer) does not fit in \(Integer.self)", at: path())
        case .unsignedInteger(let integer):
            if let exact = Integer(exactly: integer) { return exact }
            throw SyncDecodingErrors.corrupted("The integer \(integer) does not fit in \(Integer.self)", at: path())
        case .string:
            throw SyncDecodingErrors.mismatch(
                Integer.self, expected: "an integer", found: value, at: path(),
                hint: "; strings are not converted to numbers")
        default:
            throw SyncDecodingErrors.mismatch(Integer.self, expected: "an integer", found: value, at: path())
        }
    }

    static func double(_ value: SyncValue, at path: @autoclosure () -> [any CodingKey]) throws -> Double {
        switch value {
        case .real(let real): return real
        case .integer(let integer): return Double(integer)
        case .unsignedInteger(let integer): return Double(integer)
        default: throw SyncDecodingErrors.mismatch(Double.self, expected: "a number", found: value, at: path())
        }
    }

    static func float(_ value: SyncValue, at path: @autoclosure () -> [any CodingKey]) throws -> Float {
        let real = try double(value, at: path())
        if real.isFinite, abs(real) > Double(Float.greatestFiniteMagnitude) {
            throw SyncDecodingErrors.corrupted("The number \(real) does not fit in Float", at: path())
        }
        return Float(real)
    }

    static func date(_ value: SyncValue, at path: @autoclosure () -> [any CodingKey]) throws -> Date {
        switch value {
        case .date(let date):
            return date
        case .string(let string):
            if let date = ISO8601DateParsing.date(from: string) { return date }
            throw SyncDecodingErrors.corrupted(
                "Expected a date or an ISO 8601 date string but found \(SyncDecodingErrors.describe(value))", at: path())
        default:
            throw SyncDecodingErrors.mismatch(Date.self, expected: "a date", found: value, at: path())
        }
    }

    static func data(_ value: SyncValue, at path: @autoclosure () -> [any CodingKey]) throws -> Data {
        switch value {
        case .data(let bytes):
            return Data(bytes)
        case .string(let string):
            if let data = Data(base64Encoded: string) { return data }
            throw SyncDecodingErrors.corrupted(
                "Expected data or a base64 string but found \(SyncDecodingErrors.describe(value))", at: path())
        default:
            throw SyncDecodingErrors.mismatch(Data.self, expected: "data", found: value, at: path())
        }
    }

    static func url(_ value: SyncValue, at path: @autoclosure () -> [any CodingKey]) throws -> URL {
        let string = try typedString(URL.self, expected: "a URL string", value, at: path())
        if let url = URL(string: string) { return url }
        throw SyncDecodingErrors.corrupted("Expected a URL but found \(SyncDecodingErrors.describe(value))", at: path())
    }

    static func uuid(_ value: SyncValue, at path: @autoclosure () -> [any CodingKey]) throws -> UUID {
        let string = try typedString(UUID.self, expected: "a UUID string", value, at: path())
        if let uuid = UUID(uuidString: string) { return uuid }
        throw SyncDecodingErrors.corrupted("Expected a UUID but found \(SyncDecodingErrors.describe(value))", at: path())
    }

    static func decimal(_ value: SyncValue, at path: @autoclosure () -> [any CodingKey]) throws -> Decimal {
        switch value {
        case .string(let string):
            // `Decimal(string:)` reads a numeric prefix ("12abc" is 12), so check the whole string first.
            if !string.isEmpty, string.utf8.allSatisfy(isDecimalCharacter), let decimal = Decimal(string: string) {
                return decimal
            }
            throw SyncDecodingErrors.corrupted(
                "Expected a decimal number but found \(SyncDecodingErrors.describe(value))", at: path())
        case .integer(let integer): return Decimal(integer)
        case .unsignedInteger(let integer): return Decimal(integer)
        case .real(let real): return Decimal(real)
        default:
            throw SyncDecodingErrors.mismatch(Decimal.self, expected: "a decimal string or a number", found: value, at: path())
        }
    }

    private static func typedString(
        _ type: Any.Type, expected: String, _ value: SyncValue, at path: @autoclosure () -> [any CodingKey]
    ) throws -> String {
        if case .string(let string) = value { return string }
        throw SyncDecodingErrors.mismatch(type, expected: expected, found: value, at: path())
    }

    private static func isDecimalCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default: false
        }
    }
}
