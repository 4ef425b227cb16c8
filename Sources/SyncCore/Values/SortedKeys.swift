/// Puts dictionary keys in the order of their UTF-8 bytes (the order of every codec's output) without
/// allocating per dictionary, for codec writers: each dictionary's entries are sorted as a run on top of a
/// stack that one encode reuses, nested dictionaries' runs above their parent's.
///
/// Keys are compared by their first eight bytes packed big-endian into one number (zero-padded, which
/// keeps the byte order) and only on a tie by all their bytes; the sort moves these numbers and
/// dictionary indices, never strings.
@frozen
public struct SortedKeys {
    /// One entry of a dictionary being written.
    @usableFromInline @frozen
    struct Entry {
        /// The first eight bytes of the key, big-endian, zero-padded.
        @usableFromInline var prefix: UInt64
        /// Where the entry is in its dictionary.
        @usableFromInline var index: Dictionary<String, SyncValue>.Index

        @usableFromInline init(prefix: UInt64, index: Dictionary<String, SyncValue>.Index) {
            self.prefix = prefix
            self.index = index
        }
    }

    /// The runs of the dictionaries being written, innermost last, up to `top`; the array only grows.
    @usableFromInline var entries: [Entry] = []
    /// Where the next run starts.
    @usableFromInline var top = 0

    /// An empty stack.
    public init() {}

    /// Pushes the indices of `dictionary`'s entries in the order of their keys.
    /// - Returns: the positions of the run; read them with ``index(at:)`` and pop them with ``pop(_:)``.
    @inlinable
    public mutating func push(_ dictionary: [String: SyncValue]) -> Range<Int> {
        let first = top
        let end = first + dictionary.count
        if entries.count < end {
            let filler = Entry(prefix: 0, index: dictionary.startIndex)
            entries.append(contentsOf: repeatElement(filler, count: Swift.max(end - entries.count, 32)))
        }
        top = end
        let keys = dictionary.keys
        entries.withUnsafeMutableBufferPointer { buffer in
            var index = dictionary.startIndex
            for position in first..<end {
                buffer[position] = Entry(prefix: Self.prefix(keys[index]), index: index)
                dictionary.formIndex(after: &index)
            }
            let run = UnsafeMutableBufferPointer(rebasing: buffer[first..<end])
            if run.count <= 16 {
                Self.insertionSort(run, keys: keys)
            } else {
                var run = run
                run.sort { Self.precedes($0, $1, keys: keys) }
            }
        }
        return first..<end
    }

    /// The dictionary index at `position` of a run.
    @inlinable @inline(__always)
    public func index(at position: Int) -> Dictionary<String, SyncValue>.Index {
        entries[position].index
    }

    /// Pops the run on top.
    @inlinable @inline(__always)
    public mutating func pop(_ run: Range<Int>) {
        top = run.lowerBound
    }

    @inlinable
    static func insertionSort(_ buffer: UnsafeMutableBufferPointer<Entry>, keys: Dictionary<String, SyncValue>.Keys) {
        var sorted = 1
        while sorted < buffer.count {
            let entry = buffer[sorted]
            var hole = sorted
            while hole > 0, precedes(entry, buffer[hole - 1], keys: keys) {
                buffer[hole] = buffer[hole - 1]
                hole -= 1
            }
            buffer[hole] = entry
            sorted += 1
        }
    }

    @inlinable @inline(__always)
    static func precedes(_ lhs: Entry, _ rhs: Entry, keys: Dictionary<String, SyncValue>.Keys) -> Bool {
        if lhs.prefix != rhs.prefix { return lhs.prefix < rhs.prefix }
        return byBytes(keys[lhs.index], keys[rhs.index])
    }

    /// Whether `lhs` sorts before `rhs` by all their UTF-8 bytes: the tie-break.
    @usableFromInline
    static func byBytes(_ lhs: String, _ rhs: String) -> Bool { KeyOrder.precedes(lhs, rhs) }

    /// Whether `lhs` sorts before `rhs` by UTF-8 bytes, comparing their first eight bytes at once.
    @inlinable @inline(__always)
    public static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        let left = prefix(lhs)
        let right = prefix(rhs)
        if left != right { return left < right }
        return byBytes(lhs, rhs)
    }

    /// The first eight UTF-8 bytes of `key`, big-endian, zero-padded.
    @inlinable @inline(__always)
    public static func prefix(_ key: String) -> UInt64 {
        let fast = key.utf8.withContiguousStorageIfAvailable { bytes -> UInt64 in
            if bytes.count >= 8 {
                return UInt64(bigEndian: UnsafeRawPointer(bytes.baseAddress!).loadUnaligned(as: UInt64.self))
            }
            var prefix: UInt64 = 0
            for byte in bytes { prefix = prefix << 8 | UInt64(byte) }
            return prefix << UInt64(8 * (8 - bytes.count))
        }
        if let fast { return fast }
        var prefix: UInt64 = 0
        var taken = 0
        for byte in key.utf8 {
            prefix = prefix << 8 | UInt64(byte)
            taken += 1
            if taken == 8 { break }
        }
        return prefix << UInt64(8 * (8 - taken))
    }
}
