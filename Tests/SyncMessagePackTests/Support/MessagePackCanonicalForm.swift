import Foundation
import SyncCore

/// The canonical form of a value that Python's side of the interop tests
/// computes too (see ``PythonMsgPack``): JSON made only of ASCII strings,
/// integers and arrays, so it means the same whichever implementation reads it.
///
/// `["n"]` nil, `["b", flag]`, `["i", "decimal"]`, `["r", "hex of the float64 bits"]`,
/// `["s", [code points]]`, `["d", "hex"]` bytes, `["t", "seconds since 1970", nanoseconds]`,
/// `["a", [elements]]`, `["o", [[key code points, value], …]]` with entries sorted by key.
enum MessagePackCanonicalForm {
    /// The canonical form of `value`.
    static func of(_ value: SyncValue) -> SyncValue {
        switch value {
        case .null: return ["n"]
        case .bool(let flag): return ["b", .bool(flag)]
        case .integer(let integer): return ["i", .string(String(integer))]
        case .unsignedInteger(let integer): return ["i", .string(String(integer))]
        case .real(let real): return ["r", .string(hex16(real.bitPattern))]
        case .string(let string): return ["s", scalars(string)]
        case .data(let data): return ["d", .string(data.map { hex2($0) }.joined())]
        case .date(let date):
            let (seconds, nanoseconds) = timestamp(of: date)
            return ["t", .string(String(seconds)), .integer(nanoseconds)]
        case .array(let elements): return ["a", .array(elements.map(of))]
        case .dictionary(let entries):
            let sorted = entries.map { (key: $0.key.unicodeScalars.map(\.value), value: $0.value) }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            return ["o", .array(sorted.map { .array([.array($0.key.map { .integer(Int64($0)) }), of($0.value)]) })]
        }
    }

    /// The whole seconds since 1970 (rounded down) and the nearest whole
    /// nanoseconds after them, of the `Double` a `Date` holds.
    static func timestamp(of date: Date) -> (seconds: Int64, nanoseconds: Int64) {
        let interval = date.timeIntervalSinceReferenceDate
        let floor = interval.rounded(.down)
        var seconds = Int64(floor) + 978_307_200
        var nanoseconds = Int64(((interval - floor) * 1e9).rounded())
        if nanoseconds == 1_000_000_000 {
            seconds += 1
            nanoseconds = 0
        }
        return (seconds, nanoseconds)
    }

    private static func scalars(_ string: String) -> SyncValue {
        .array(string.unicodeScalars.map { .integer(Int64($0.value)) })
    }

    private static func hex2(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }

    private static func hex16(_ bits: UInt64) -> String {
        let digits = String(bits, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
