/// A set of UIDs or sequence numbers as IMAP writes it: `1:3,5,7:*`.
///
/// `*` stands for the largest number in the mailbox; it is kept as `UInt32.max`.
/// Since `n:*` always includes the largest message, even when that is below `n`,
/// a UID FETCH of `n:*` must filter the UIDs it gets back.
public struct IMAPSequenceSet: Sendable, Hashable, CustomStringConvertible {
    /// The ranges, in the order given; `UInt32.max` is `*`.
    public var ranges: [ClosedRange<UInt32>]

    /// The set of these ranges.
    public init(_ ranges: [ClosedRange<UInt32>]) { self.ranges = ranges }

    /// The set of these numbers, written as ranges of consecutive numbers.
    public init(_ numbers: some Sequence<UInt32>) {
        var ranges: [ClosedRange<UInt32>] = []
        for number in Set(numbers).sorted() {
            if let last = ranges.last, last.upperBound != UInt32.max, last.upperBound + 1 == number {
                ranges[ranges.count - 1] = last.lowerBound...number
            } else {
                ranges.append(number...number)
            }
        }
        self.ranges = ranges
    }

    /// Reads `1:3,5,7:*`.
    /// - Throws: ``IMAPError`` for anything else.
    public init(parsing text: String) throws(IMAPError) {
        var ranges: [ClosedRange<UInt32>] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: ":", omittingEmptySubsequences: false)
            guard ends.count == 1 || ends.count == 2 else { throw IMAPError("'\(text.prefix(80))' is not a sequence set") }
            var numbers: [UInt32] = []
            for end in ends {
                if end == "*" {
                    numbers.append(UInt32.max)
                } else if let number = UInt32(end), number > 0, end.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
                    numbers.append(number)
                } else {
                    throw IMAPError("'\(text.prefix(80))' is not a sequence set")
                }
            }
            ranges.append(numbers.min()!...numbers.max()!)
        }
        self.ranges = ranges
    }

    /// Whether `number` is in the set.
    public func contains(_ number: UInt32) -> Bool { ranges.contains { $0.contains(number) } }

    /// Whether the set is empty.
    public var isEmpty: Bool { ranges.isEmpty }

    /// The numbers of the set, with `*` read as `largest`; at most `limit` of them.
    public func numbers(largest: UInt32 = UInt32.max, limit: Int = 1_000_000) -> [UInt32] {
        var result: [UInt32] = []
        for range in ranges {
            let upper = range.upperBound == UInt32.max ? largest : range.upperBound
            let lower = range.lowerBound == UInt32.max ? largest : range.lowerBound
            guard lower <= upper else { continue }
            for number in lower...upper {
                guard result.count < limit else { return result }
                result.append(number)
            }
        }
        return result
    }

    /// `1:3,5,7:*`.
    public var description: String {
        ranges.map { range in
            let lower = range.lowerBound == UInt32.max ? "*" : String(range.lowerBound)
            let upper = range.upperBound == UInt32.max ? "*" : String(range.upperBound)
            return range.lowerBound == range.upperBound ? lower : lower + ":" + upper
        }.joined(separator: ",")
    }
}
