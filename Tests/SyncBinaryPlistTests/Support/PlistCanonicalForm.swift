import Foundation
import SyncCore
import TestSupport

/// A canonical text for a value that Python's side of the interop tests
/// computes too (see ``PythonPlist``), so that a value read on either side can
/// be compared exactly with one written on the other.
///
/// `T`/`F` Booleans, `i<decimal>;` integers, `r<hex>` reals and `d<hex>` dates
/// (the 16 hex digits of the Float64 bits, so `-0.0` and NaN compare exactly),
/// `x<hex>;` data, `s<hex of UTF-8>;` strings, `a<n>[…]` arrays and
/// `o<n>{key value …}` dictionaries with keys sorted by their UTF-8 bytes.
enum PlistCanonicalForm {
    /// The canonical text of `value`.
    static func of(_ value: SyncValue) -> String {
        var text = ""
        append(value, to: &text)
        return text
    }

    private static func append(_ value: SyncValue, to text: inout String) {
        switch value {
        case .null: text += "N"
        case .bool(let flag): text += flag ? "T" : "F"
        case .integer(let integer): text += "i\(integer);"
        case .unsignedInteger(let integer): text += "i\(integer);"
        case .real(let real): text += "r" + hex16(real.bitPattern)
        case .date(let date): text += "d" + hex16(date.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let data): text += "x" + hex(data) + ";"
        case .string(let string): text += "s" + hex(Array(string.utf8)) + ";"
        case .array(let elements):
            text += "a\(elements.count)["
            for element in elements { append(element, to: &text) }
            text += "]"
        case .dictionary(let entries):
            text += "o\(entries.count){"
            for (key, entry) in entries.sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }) {
                append(.string(key), to: &text)
                append(entry, to: &text)
            }
            text += "}"
        }
    }

    /// Lowercase hex of `bytes`.
    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    private static func hex16(_ bits: UInt64) -> String {
        hex((0..<8).reversed().map { UInt8(truncatingIfNeeded: bits >> UInt64($0 * 8)) })
    }

    /// Whether two values are equal with reals and dates compared bit for bit
    /// (so `-0.0` differs from `0.0` and NaN equals the same NaN).
    static func exactlyEqual(_ lhs: SyncValue, _ rhs: SyncValue) -> Bool {
        of(lhs) == of(rhs)
    }
}
