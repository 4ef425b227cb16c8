import Foundation
import SyncCore

/// The canonical form of a value that Python's side of the interop tests
/// computes too (see ``PythonJSON``): only ASCII strings, integers and arrays,
/// so it means the same whichever JSON implementation reads it.
enum CanonicalForm {
    /// The canonical form of `value` as it should read back from JSON: a date
    /// as its ISO 8601 text and data as base64 text, both from Foundation, so
    /// that the expectation does not come from the codec under test.
    static func of(_ value: SyncValue) -> SyncValue {
        switch value {
        case .null: return ["n"]
        case .bool(let flag): return ["b", .bool(flag)]
        case .integer(let integer): return ["i", .string(String(integer))]
        case .unsignedInteger(let integer): return ["i", .string(String(integer))]
        case .real(let real): return ["r", .string(hex16(real.bitPattern))]
        case .string(let string): return ["s", scalars(string)]
        case .date(let date): return ["s", scalars(date.formatted(.iso8601))]
        case .data(let data): return ["s", scalars(Data(data).base64EncodedString())]
        case .array(let elements): return ["a", .array(elements.map(of))]
        case .dictionary(let entries):
            let sorted = entries.map { (key: $0.key.unicodeScalars.map(\.value), value: $0.value) }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            return ["o", .array(sorted.map { .array([.array($0.key.map { .integer(Int64($0)) }), of($0.value)]) })]
        }
    }

    /// Whether two values are equal with reals compared bit for bit (so `-0.0` differs from `0.0`).
    static func exactlyEqual(_ lhs: SyncValue, _ rhs: SyncValue) -> Bool {
        switch (lhs, rhs) {
        case (.real(let left), .real(let right)): return left.bitPattern == right.bitPattern
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { exactlyEqual($0, $1) }
        case (.dictionary(let left), .dictionary(let right)):
            return left.count == right.count
                && left.allSatisfy { key, value in right[key].map { exactlyEqual(value, $0) } ?? false }
        default: return lhs == rhs
        }
    }

    private static func scalars(_ string: String) -> SyncValue {
        .array(string.unicodeScalars.map { .integer(Int64($0.value)) })
    }

    private static func hex16(_ bits: UInt64) -> String {
        let digits = String(bits, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
