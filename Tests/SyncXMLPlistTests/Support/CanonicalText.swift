import Foundation
import SyncCore

/// A plain-ASCII description of a value that the Python side of the interop
/// tests computes too (see ``PythonPlist``), so that the two implementations
/// compare values without trusting either one's writer: strings as lists of
/// code points, reals as the hex of their IEEE 754 bits (all NaNs alike),
/// dates as whole seconds since 1970, dictionaries sorted by key.
enum CanonicalText {
    /// The canonical text of `value`.
    static func of(_ value: SyncValue) -> String {
        var text = ""
        append(value, to: &text)
        return text
    }

    private static func append(_ value: SyncValue, to text: inout String) {
        switch value {
        case .null: text += "n;"
        case .bool(let flag): text += flag ? "T;" : "F;"
        case .integer(let integer): text += "i\(integer);"
        case .unsignedInteger(let integer): text += "i\(integer);"
        case .real(let real): text += real.isNaN ? "rnan;" : "r\(hex16(real.bitPattern));"
        case .string(let string): appendString(string, to: &text)
        case .date(let date): text += "d\(Int64(date.timeIntervalSince1970.rounded(.down)));"
        case .data(let bytes): text += "x" + bytes.map { hex2($0) }.joined() + ";"
        case .array(let elements):
            text += "["
            for element in elements { append(element, to: &text) }
            text += "]"
        case .dictionary(let entries):
            text += "{"
            let sorted = entries.sorted {
                $0.key.unicodeScalars.map(\.value).lexicographicallyPrecedes($1.key.unicodeScalars.map(\.value))
            }
            for (key, entry) in sorted {
                appendString(key, to: &text)
                append(entry, to: &text)
            }
            text += "}"
        }
    }

    private static func appendString(_ string: String, to text: inout String) {
        text += "s" + string.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ".") + ";"
    }

    private static func hex16(_ bits: UInt64) -> String {
        let digits = String(bits, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func hex2(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }
}
