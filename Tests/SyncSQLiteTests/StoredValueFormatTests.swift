import Foundation
import SyncCore
import SyncTesting
import Testing

@testable import SyncSQLite

@Suite("Stored value format")
struct StoredValueFormatTests {
    @Test func randomValuesReadBackEqual() throws {
        var values = RandomValues(seed: 7, features: [.null, .date, .data, .unsignedInteger], maxDepth: 5)
        for _ in 0..<2_000 {
            let value = values.next()
            #expect(try StoredValueFormat.decode(StoredValueFormat.encode(value)) == value)
        }
    }

    @Test func extremesKeepEveryBit() throws {
        let values: [SyncValue] = [
            .integer(.min), .integer(.max), .integer(-1), .integer(0), .unsignedInteger(.max),
            .real(-0.0), .real(.infinity), .real(.leastNonzeroMagnitude), .real(.greatestFiniteMagnitude),
            .date(Date(timeIntervalSinceReferenceDate: 0.123_456_789_012_345)), .date(.distantPast),
            .string(""), .string("naïve 東京 🧪 \u{0}"), .data([]), .data([0, 255]), .array([]), .dictionary([:]),
        ]
        for value in values {
            let decoded = try StoredValueFormat.decode(StoredValueFormat.encode(value))
            #expect(decoded == value, "\(value)")
        }
        let negativeZero = try StoredValueFormat.decode(StoredValueFormat.encode(.real(-0.0)))
        #expect(negativeZero.realValue?.sign == .minus)
    }

    @Test func equalDictionariesGiveEqualBytes() throws {
        let first: SyncValue = ["b": 1, "a": 2, "c": ["z": true, "y": nil]]
        let second: SyncValue = ["c": ["y": nil, "z": true], "a": 2, "b": 1]
        #expect(try StoredValueFormat.encode(first) == StoredValueFormat.encode(second))
    }

    @Test func everyTruncationIsReportedCorrupt() throws {
        let blob = try StoredValueFormat.encode(["name": "Ada", "tags": ["x", 1, 2.5], "born": .date(.distantPast)])
        for length in 0..<blob.count {
            let error = #expect(throws: StoreError.self, "truncated to \(length) bytes") {
                try StoredValueFormat.decode(Data(blob.prefix(length)))
            }
            #expect(error?.code == .corrupt)
        }
    }

    @Test func garbageIsReportedCorruptNotCrashing() throws {
        let garbage: [[UInt8]] = [
            [2, 0], [1, 99], [1, 1, 0xFF, 0xFF], [1, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
            [1, 10, 2, 1, 0x61, 0, 1, 0x61, 0], [1, 0, 0], [1, 1, 2, 0xC3, 0x28],
            [1] + Array(repeating: 9, count: 10_000) + [1],
        ]
        for bytes in garbage {
            let error = #expect(throws: StoreError.self, "\(bytes.prefix(12))") {
                try StoredValueFormat.decode(Data(bytes))
            }
            #expect(error?.code == .corrupt)
        }
    }

    @Test func tooDeepValueIsRefusedOnWrite() {
        var value: SyncValue = 1
        for _ in 0...StoredValueFormat.maxDepth { value = [value] }
        let error = #expect(throws: StoreError.self) { try StoredValueFormat.encode(value) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func readFieldsReadsNamedFieldsRemovesOthersAndNotesAName() throws {
        var values = RandomValues(seed: 11, features: [.null, .date, .data, .unsignedInteger], maxDepth: 3)
        for round in 0..<300 {
            var fields = values.nextDictionary().dictionaryValue ?? [:]
            fields["gid"] = .string("g\(round)")
            if round.isMultiple(of: 2) { fields["ust"] = .integer(Int64(round)) }
            let blob = [UInt8](try StoredValueFormat.encode(fields: fields))
            let names = ["ust", "gid", "absent"] + fields.keys.filter { $0 != "ust" && $0 != "gid" }.prefix(1)
            let (read, rest, noted) = try StoredValueFormat.readFields(
                names, removing: ["ust", "absent"], from: blob, noting: { $0.hasPrefix("g") })
            #expect(read == names.map { fields[$0] })
            // The first name in the blob's order (UTF-8 bytes) that the predicate accepts.
            #expect(noted == fields.keys.filter { $0.hasPrefix("g") }.min { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            var kept = fields
            kept["ust"] = nil
            #expect(rest == (try StoredValueFormat.encode(fields: kept)))
        }
        let notFields = [UInt8](try StoredValueFormat.encode(.array([1])))
        let error = #expect(throws: StoreError.self) { try StoredValueFormat.readFields(["a"], removing: [], from: notFields) }
        #expect(error?.code == .corrupt)
        var truncated = [UInt8](try StoredValueFormat.encode(fields: ["name": "Ada", "ust": 3]))
        truncated.removeLast()
        #expect(throws: StoreError.self) { try StoredValueFormat.readFields(["name"], removing: ["ust"], from: truncated) }
    }
}
