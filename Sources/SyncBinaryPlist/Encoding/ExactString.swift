/// A string compared by its exact Unicode scalars (its UTF-8 bytes), for
/// uniquing strings in the writer.
///
/// Swift's `String ==` treats canonically equivalent spellings ("é" and
/// "e\u{301}") as equal; uniquing with it would write one of them for both and
/// silently change the other. This wrapper keeps them apart.
struct ExactString: Hashable {
    /// The string.
    let string: String

    static func == (lhs: Self, rhs: Self) -> Bool {
        let left = lhs.string.utf8
        let right = rhs.string.utf8
        guard left.count == right.count else { return false }
        return left.withContiguousStorageIfAvailable { leftBytes in
            right.withContiguousStorageIfAvailable { rightBytes in
                leftBytes.elementsEqual(rightBytes)
            }
        }.flatMap { $0 } ?? left.elementsEqual(right)
    }

    func hash(into hasher: inout Hasher) {
        let bytes = string.utf8
        if bytes.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in bytes { hasher.combine(byte) }
        }
        hasher.combine(bytes.count)
    }
}
