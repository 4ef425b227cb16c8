/// The order of keys in encoded dictionaries: by UTF-8 bytes (which is also by
/// Unicode scalar values), so that equal values give equal bytes in every codec.
package enum KeyOrder {
    /// Whether `lhs` sorts before `rhs` by UTF-8 bytes.
    package static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        // Native strings keep their UTF-8 in contiguous storage: compare it in place.
        let ordered = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                let common = min(left.count, right.count)
                for index in 0..<common where left[index] != right[index] {
                    return left[index] < right[index]
                }
                return left.count < right.count
            }
        }
        if let ordered = ordered ?? nil { return ordered }
        return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// The indices of `entries` in the order of their keys: sorting indices moves small values, where
    /// sorting the entries themselves copies every key and value (and counts their references) as it goes.
    ///
    /// Each key's first eight bytes are compared as one number first; only keys that share them are
    /// compared byte by byte.
    package static func sortedIndices(of entries: [String: SyncValue]) -> [Dictionary<String, SyncValue>.Index] {
        let keys = entries.keys
        var sortable: [(prefix: UInt64, index: Dictionary<String, SyncValue>.Index)] = []
        sortable.reserveCapacity(entries.count)
        for index in entries.indices { sortable.append((prefix(of: keys[index]), index)) }
        sortable.sort { left, right in
            left.prefix != right.prefix ? left.prefix < right.prefix : precedes(keys[left.index], keys[right.index])
        }
        return sortable.map(\.index)
    }

    /// The first eight UTF-8 bytes of `key` as a big-endian number, zero-padded: numbers in the order
    /// of their keys, except that keys sharing these bytes compare equal.
    private static func prefix(of key: String) -> UInt64 {
        var prefix: UInt64 = 0
        var shift: UInt64 = 56
        for byte in key.utf8.prefix(8) {
            prefix |= UInt64(byte) << shift
            shift &-= 8
        }
        return prefix
    }
}
