import Foundation
import SyncCore

/// Fixed values for the round-trip and interop tests: every kind a binary
/// property list carries, at the boundaries of every size the format switches at.
enum BinaryPlistCorpus {
    /// A nested message with every kind the codec carries.
    static let nestedSample: SyncValue = [
        "header": ["version": "1.0", "sequence": 7, "final": true, "stamp": .date(Date(timeIntervalSinceReferenceDate: 7.5))],
        "body": [
            ["name": "sync-start", "params": ["uri": "com.apple.Contacts", "anchors": ["mode": "fast"]]],
            ["name": "sync-changes", "items": ["a1": ["op": "add", "record": ["name": "Ada \"Countess\" Lovelace", "ratio": 0.25]]]],
            [1, -2, 3.5, "é中😀\n", .unsignedInteger(18_446_744_073_709_551_615), [], .data([0, 1, 2, 0xFF])],
        ],
        "empty": [:],
    ]

    /// Integers at every width boundary.
    static let integers: [SyncValue] = [
        0, 1, 14, 15, 127, 128, 255, 256, 65_535, 65_536, 4_294_967_295, 4_294_967_296,
        .integer(Int64.max), -1, -128, -255, -256, -65_536, .integer(Int64.min),
        .unsignedInteger(UInt64(Int64.max) + 1), .unsignedInteger(UInt64.max),
    ]

    /// Reals, finite and not (NaN is tested apart, as it never equals itself).
    static let reals: [SyncValue] = [
        0.0, -0.0, 1.5, -2.25, .real(.pi), 1e-300, 1e300, .real(.greatestFiniteMagnitude),
        .real(.leastNonzeroMagnitude), .real(.infinity), .real(-.infinity),
    ]

    /// Strings around the count boundaries, in ASCII and not.
    static let strings: [SyncValue] = [
        "", "a", "\u{0}", .string(String(repeating: "x", count: 14)), .string(String(repeating: "y", count: 15)),
        .string(String(repeating: "z", count: 255)), .string(String(repeating: "w", count: 256)),
        .string(String(repeating: "v", count: 70_000)),
        "é", "e\u{301}", "中文", "😀", "𝄞 and \u{10FFFF}", "\u{FEFF}BOM", "\u{7F}\u{80}",
        .string(String(repeating: "é", count: 15)), .string(String(repeating: "😀", count: 40_000)),
    ]

    /// Dates: the reference date, before it, fractions, far away.
    static let dates: [SyncValue] = [
        .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: -1)),
        .date(Date(timeIntervalSinceReferenceDate: 0.5)), .date(Date(timeIntervalSinceReferenceDate: 736_000_000.25)),
        .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: -2_208_988_800)),
        .date(Date(timeIntervalSince1970: 7_258_118_400)),
    ]

    /// Data around the count boundaries.
    static let datas: [SyncValue] = [
        .data([]), .data([0]), .data(Array(0..<15)), .data(Array(repeating: 0xAB, count: 300)),
        .data((0..<70_000).map { UInt8(truncatingIfNeeded: $0) }),
    ]

    /// Containers: empty, at the count boundaries, nested, sharing equal scalars.
    static let containers: [SyncValue] = [
        [], [:], [[]], [[:]], .array((0..<15).map { .integer(Int64($0)) }),
        .array((0..<300).map { .integer(Int64($0)) }),
        .dictionary(Dictionary(uniqueKeysWithValues: (0..<15).map { ("k\($0)", SyncValue.integer(Int64($0))) })),
        .dictionary(Dictionary(uniqueKeysWithValues: (0..<300).map { ("key\($0)", SyncValue.string("v\($0 % 7)")) })),
        ["same", "same", "same", 1, 1, 1.0, true, true, false],
        ["é": 1, "e\u{301}x": 2, "中": ["😀": [1, [2, [3]]]]],
        [["a": 1], ["a": 1]],
        records(count: 20),
    ]

    /// Everything above.
    static var all: [SyncValue] {
        var values: [SyncValue] = integers
        values += reals
        values += strings
        values += dates
        values += datas
        values += containers
        values += [nestedSample, true, false]
        return values
    }

    /// A records-like array: `count` dictionaries with the same keys, as sync messages hold.
    static func records(count: Int) -> SyncValue {
        .array((0..<count).map(record))
    }

    /// One record of ``records(count:)``.
    private static func record(_ index: Int) -> SyncValue {
        var fields: [String: SyncValue] = [:]
        fields["id"] = .string("3F2504E0-4F89-11D3-9A0C-\(String(format: "%012d", index))")
        fields["name"] = .string("Contact \(index)")
        fields["email"] = .string("person\(index)@example.org")
        fields["age"] = .integer(Int64(20 + index % 50))
        fields["score"] = .real(Double(index) * 1.25)
        fields["active"] = .bool(index % 3 != 0)
        fields["updated"] = .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index) * 60))
        fields["tags"] = .array(["friend", index % 2 == 0 ? "work" : "home"])
        return .dictionary(fields)
    }
}
