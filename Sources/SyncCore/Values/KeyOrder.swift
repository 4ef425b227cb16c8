/// The order of keys in encoded dictionaries: by UTF-8 bytes (which is also by
/// Unicode scalar values), so that equal values give equal bytes in every codec.
package enum KeyOrder {
    /// Whether `lhs` sorts before `rhs` by UTF-8 bytes.
    package static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        // Native strings keep their UTF-8 in contiguous storage: compare it in place.
        let ordered = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in compare(left, right) < 0 }
        }
        if let ordered = ordered ?? nil { return ordered }
        return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// How two strings' UTF-8 bytes order: negative when `lhs` comes first, zero when they are equal,
    /// positive when `rhs` comes first.
    package static func compare(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(lhs.count, rhs.count)
        for index in 0..<common where lhs[index] != rhs[index] {
            return lhs[index] < rhs[index] ? -1 : 1
        }
        return lhs.count - rhs.count
    }

    /// The indices of `entries` in the order of their keys: sorting indices moves small values, where
    /// sorting the entries themselves copies every key and value (and counts their references) as it goes.
    package static func sortedIndices(of entries: [String: SyncValue]) -> [Dictionary<String, SyncValue>.Index] {
        var indices = Array(entries.indices)
        let keys = entries.keys
        indices.sort { precedes(keys[$0], keys[$1]) }
        return indices
    }
}
