#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A total order on records that every node computes alike: by
/// ``RecordVersion``, then — for equal versions — by content, so that
/// "the newer one wins" never depends on which side asks.
///
/// Content compares without hashing (Swift's hash seeds differ per process):
/// a live record comes after a tombstone, then fields compare as sorted
/// key–value lists of ``SyncValue``s in a fixed order of kinds.
enum RecordOrdering {
    /// Whether `record` comes after `other`: a later version, or the same
    /// version and greater content. Equal records are not newer than each other.
    static func isNewer(_ record: SyncRecord, than other: SyncRecord) -> Bool {
        if record.version != other.version { return record.version > other.version }
        if record.isDeleted != other.isDeleted { return !record.isDeleted }
        return compare(record.fields, other.fields) > 0
    }

    /// -1, 0 or 1 as `lhs` orders before, with or after `rhs`.
    static func compare(_ lhs: SyncValue, _ rhs: SyncValue) -> Int {
        switch (lhs, rhs) {
        case (.null, .null): return 0
        case (.string(let a), .string(let b)): return order(a, b)
        case (.integer(let a), .integer(let b)): return order(a, b)
        case (.unsignedInteger(let a), .unsignedInteger(let b)): return order(a, b)
        // A canonical unsigned integer is above Int64.max, so above every signed one.
        case (.integer, .unsignedInteger): return -1
        case (.unsignedInteger, .integer): return 1
        case (.real(let a), .real(let b)):
            if a.bitPattern == b.bitPattern { return 0 }
            return a.isTotallyOrdered(belowOrEqualTo: b) ? -1 : 1
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        case (.date(let a), .date(let b)): return order(a.timeIntervalSince1970, b.timeIntervalSince1970)
        case (.data(let a), .data(let b)): return lexicographic(a, b, by: order)
        case (.array(let a), .array(let b)): return lexicographic(a, b, by: compare)
        case (.dictionary(let a), .dictionary(let b)): return compare(a, b)
        default: return order(rank(lhs), rank(rhs))
        }
    }

    /// Compares dictionaries as their entries sorted by key.
    static func compare(_ lhs: [String: SyncValue], _ rhs: [String: SyncValue]) -> Int {
        let left = lhs.sorted { $0.key < $1.key }
        let right = rhs.sorted { $0.key < $1.key }
        return lexicographic(left, right) { a, b in
            let byKey = order(a.key, b.key)
            return byKey != 0 ? byKey : compare(a.value, b.value)
        }
    }

    private static func rank(_ value: SyncValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .integer, .unsignedInteger: 2
        case .real: 3
        case .string: 4
        case .date: 5
        case .data: 6
        case .array: 7
        case .dictionary: 8
        }
    }

    private static func order<Value: Comparable>(_ lhs: Value, _ rhs: Value) -> Int {
        lhs < rhs ? -1 : (lhs == rhs ? 0 : 1)
    }

    private static func lexicographic<Element>(
        _ lhs: [Element], _ rhs: [Element], by compare: (Element, Element) -> Int
    ) -> Int {
        for (a, b) in zip(lhs, rhs) {
            let result = compare(a, b)
            if result != 0 { return result }
        }
        return order(lhs.count, rhs.count)
    }
}
