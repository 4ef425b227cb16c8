#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// How the console writes a field's value as text: a string as it is, a number in decimal, a date in
/// ISO 8601, data as its size and first bytes in hex, arrays and dictionaries as JSON-like text (keys
/// sorted). Text longer than ``maxCharacters`` is cut with `…`. The page shows it as text, never markup.
enum FieldText {
    /// The longest text one field is written as.
    static let maxCharacters = 10_000
    /// The bytes of a data value shown in hex.
    static let dataBytesShown = 64

    /// The value's type as the console names it.
    static func typeName(of value: SyncValue) -> String {
        switch value {
        case .null: "null"
        case .string: "string"
        case .integer, .unsignedInteger: "integer"
        case .real: "double"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// The value as text.
    static func text(of value: SyncValue) -> String {
        var text = ""
        write(value, into: &text, quoted: false)
        return text.count > maxCharacters ? String(text.prefix(maxCharacters)) + "…" : text
    }

    private static func write(_ value: SyncValue, into text: inout String, quoted: Bool) {
        guard text.utf8.count <= maxCharacters * 4 else { return }
        switch value {
        case .null: text += "null"
        case .string(let string): text += quoted ? quote(string) : string
        case .integer(let number): text += String(number)
        case .unsignedInteger(let number): text += String(number)
        case .real(let number): text += String(number)
        case .bool(let flag): text += flag ? "true" : "false"
        case .date(let date): text += date.formatted(.iso8601)
        case .data(let bytes):
            let digits = Array("0123456789abcdef")
            let hex = bytes.prefix(dataBytesShown).map { "\(digits[Int($0 >> 4)])\(digits[Int($0 & 0x0F)])" }.joined()
            text += "\(bytes.count) bytes: \(hex)\(bytes.count > dataBytesShown ? "…" : "")"
        case .array(let values):
            text += "["
            for (index, element) in values.enumerated() {
                if index > 0 { text += ", " }
                write(element, into: &text, quoted: true)
            }
            text += "]"
        case .dictionary(let fields):
            text += "{"
            for (index, key) in fields.keys.sorted().enumerated() {
                if index > 0 { text += ", " }
                text += quote(key) + ": "
                write(fields[key] ?? .null, into: &text, quoted: true)
            }
            text += "}"
        }
    }

    private static func quote(_ string: String) -> String {
        var quoted = "\""
        for character in string {
            if character == "\\" || character == "\"" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }
}
