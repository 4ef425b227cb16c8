import SyncCore

/// The key sets of recently made dictionaries, so that a dict whose keys repeat
/// an earlier dict's, in the same order (every record of a document, as a rule),
/// is made without hashing its keys again.
///
/// Making a dictionary hashes each key; copying one does not (Swift copies its
/// storage bucket by bucket). So each shape keeps a dictionary of its keys with
/// placeholder values and where each key sits in it; a dict of that shape is a
/// copy of it with each value put in its key's place.
///
/// A small direct-mapped table by a hash of the keys' fingerprints, for dicts of
/// up to ``largestShape`` ASCII keys; a dict of any other shape is made as usual.
struct PlistDictionaryShapes: ~Copyable {
    private struct Shape {
        /// The keys, in the order the dict read them.
        var keys: [PlistKey] = []
        /// A dictionary of those keys, each with a placeholder value.
        var dictionary: [String: SyncValue] = [:]
        /// Where each of `keys` sits in `dictionary`.
        var indices: [Dictionary<String, SyncValue>.Index] = []
    }

    private static let slotBits = 4
    private static let slotCount = 1 << slotBits
    /// Dicts of more keys are rarely repeated; they are made as usual.
    private static let largestShape = 64
    // `slotCount` initialized shapes, owned here.
    private let shapes: UnsafeMutablePointer<Shape>

    /// An empty table.
    init() {
        shapes = .allocate(capacity: Self.slotCount)
        shapes.initialize(repeating: Shape(), count: Self.slotCount)
    }

    deinit {
        shapes.deinitialize(count: Self.slotCount)
        shapes.deallocate()
    }

    /// The dictionary of `keys` and `values`, pair by pair, moved out of both buffers (which must be
    /// as many); `nil` when two keys are equal (everything is moved out all the same).
    mutating func dictionary(
        keys: UnsafeMutableBufferPointer<PlistKey>, values: UnsafeMutableBufferPointer<SyncValue>
    ) -> [String: SyncValue]? {
        precondition(keys.count == values.count)
        guard let signature = Self.signature(of: UnsafeBufferPointer(keys)) else {
            return Self.made(keys: keys, values: values)
        }
        let shape = shapes + Int(truncatingIfNeeded: signature >> (64 - UInt64(Self.slotBits)))  // 0..<slotCount
        if Self.keys(UnsafeBufferPointer(keys), areThoseOf: shape.pointee) {
            var dictionary = shape.pointee.dictionary
            shape.pointee.indices.withUnsafeBufferPointer { indices in
                // The first store copies the shape's storage (without hashing), the others write in place.
                for place in 0..<values.count { dictionary.values[indices[place]] = values.moveElement(from: place) }
            }
            _ = keys.deinitialize()
            return dictionary
        }
        let shapeKeys = Array(keys)
        guard let dictionary = Self.made(keys: keys, values: values) else { return nil }
        let placeholders = dictionary.mapValues { _ in SyncValue.bool(false) }
        shape.pointee = Shape(
            keys: shapeKeys, dictionary: placeholders, indices: shapeKeys.map { placeholders.index(forKey: $0.string)! })
        return dictionary
    }

    /// A hash of the keys' fingerprints, or `nil` when the dict is not one this table keeps
    /// (too many keys, or one that is not ASCII: only ASCII keys have fingerprints).
    @inline(__always)
    private static func signature(of keys: UnsafeBufferPointer<PlistKey>) -> UInt64? {
        guard !keys.isEmpty, keys.count <= largestShape else { return nil }
        var hash = UInt64(truncatingIfNeeded: keys.count)
        for key in keys {
            guard key.fingerprint != 0 else { return nil }
            hash = (hash ^ key.fingerprint) &* 0x9E37_79B9_7F4A_7C15
        }
        return hash
    }

    /// Whether `keys` are the shape's, in its order.
    @inline(__always)
    private static func keys(_ keys: UnsafeBufferPointer<PlistKey>, areThoseOf shape: borrowing Shape) -> Bool {
        guard keys.count == shape.keys.count else { return false }
        return shape.keys.withUnsafeBufferPointer { known in
            for place in 0..<keys.count {
                // Equal ASCII keys have equal fingerprints; a key read from the key cache is the same
                // string as the shape's, which `==` tells from the strings' bits alone.
                guard keys[place].fingerprint == known[place].fingerprint, keys[place].string == known[place].string else {
                    return false
                }
            }
            return true
        }
    }

    /// The dictionary made by hashing each key; `nil` when two keys are equal.
    private static func made(
        keys: UnsafeMutableBufferPointer<PlistKey>, values: UnsafeMutableBufferPointer<SyncValue>
    ) -> [String: SyncValue]? {
        // This initializer is inlinable, so it is specialized here (`init(minimumCapacity:)`
        // is not, and looks generic metadata up on every call); it moves every pair out.
        var collided = false
        let entries = [String: SyncValue](
            PlistMovedEntries(keys: keys, values: values),
            uniquingKeysWith: { first, _ in
                collided = true
                return first
            })
        return collided ? nil : entries
    }
}

/// The key-value pairs of a dict, moved out of the builder's stacks one by one as they are read.
private struct PlistMovedEntries: Sequence, IteratorProtocol {
    /// The dict's keys, in order; slots before `index` have been moved out.
    let keys: UnsafeMutableBufferPointer<PlistKey>
    /// The dict's values, one per key.
    let values: UnsafeMutableBufferPointer<SyncValue>
    private var index = 0

    /// The pairs of `keys` and `values`, which must be as many.
    init(keys: UnsafeMutableBufferPointer<PlistKey>, values: UnsafeMutableBufferPointer<SyncValue>) {
        precondition(keys.count == values.count)
        self.keys = keys
        self.values = values
    }

    /// All the pairs: the dictionary is made at its final size.
    var underestimatedCount: Int { keys.count }

    /// The next pair, moved out of its slots (each slot is moved out exactly once: `index` only grows).
    mutating func next() -> (String, SyncValue)? {
        guard index < keys.count else { return nil }
        defer { index += 1 }
        return (keys.moveElement(from: index).string, values.moveElement(from: index))
    }
}
