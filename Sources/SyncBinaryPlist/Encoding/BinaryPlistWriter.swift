#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Writes one ``SyncValue`` as a `bplist00` file in a single walk of the value.
///
/// Scalars are written to the object area as soon as they are first met, each
/// distinct one once (strings, integers, reals, dates, data and Booleans are
/// uniqued; arrays and dictionaries never are, as in Apple's writer). Objects
/// are numbered in pre-order, the top object first and a dictionary's keys
/// before its values. The references inside a container can only be written
/// once the number of objects — hence the reference size — is known, so the
/// containers are written after the walk, at the end of the object area.
/// The offset table and the trailer follow: references take the fewest bytes
/// that name every object, offsets the fewest that hold the offset table's
/// start (the size Apple's reader requires).
struct BinaryPlistWriter {
    /// The file being written: header, then objects.
    var bytes: [UInt8]
    /// The byte offset of each object, by object number (containers: filled in by ``finish()``).
    private var offsets: [Int] = []
    /// Containers whose bytes are not written yet.
    private var pendingContainers: [PendingContainer] = []
    /// The object numbers each pending container refers to, in one flat list.
    private var references: [Int] = []
    /// The deepest nesting of arrays and dictionaries accepted.
    private let maxDepth: Int

    private var stringObjects: [ExactString: Int] = [:]
    private var integerObjects: [Int64: Int] = [:]
    private var unsignedObjects: [UInt64: Int] = [:]
    private var realObjects: [UInt64: Int] = [:]
    private var dateObjects: [UInt64: Int] = [:]
    private var dataObjects: [[UInt8]: Int] = [:]
    private var falseObject: Int?
    private var trueObject: Int?

    /// A container whose references are written by ``finish()``.
    private struct PendingContainer {
        var object: Int
        var type: BinaryPlistFormat.ObjectType
        var count: Int
        var firstReference: Int
    }

    init(maxDepth: Int) {
        self.maxDepth = maxDepth
        bytes = BinaryPlistFormat.header
        bytes.reserveCapacity(256)
    }

    /// Writes `value` as the top object and returns the whole file.
    static func encode(_ value: SyncValue, maxDepth: Int) throws(CodecError) -> [UInt8] {
        var writer = BinaryPlistWriter(maxDepth: maxDepth)
        _ = try writer.add(value, depth: 0)
        writer.finish()
        return writer.bytes
    }

    /// Adds `value` (and everything in it) and returns its object number.
    private mutating func add(_ value: SyncValue, depth: Int) throws(CodecError) -> Int {
        switch value {
        case .null:
            throw .unsupportedValue("a binary property list cannot carry null")
        case .bool(let flag):
            return addBool(flag)
        case .integer(let integer):
            guard let object = Self.claim(integer, in: &integerObjects, next: offsets.count) else {
                return integerObjects[integer]!
            }
            startObject(object)
            writeInteger(integer)
            return object
        case .unsignedInteger(let integer):
            if let signed = Int64(exactly: integer) { return try add(.integer(signed), depth: depth) }
            guard let object = Self.claim(integer, in: &unsignedObjects, next: offsets.count) else {
                return unsignedObjects[integer]!
            }
            startObject(object)
            writeUnsignedInteger128(integer)
            return object
        case .real(let real):
            guard let object = Self.claim(real.bitPattern, in: &realObjects, next: offsets.count) else {
                return realObjects[real.bitPattern]!
            }
            startObject(object)
            bytes.append(BinaryPlistFormat.ObjectType.real.marker(low: 3))
            appendBigEndian(real.bitPattern, size: 8)
            return object
        case .date(let date):
            guard date.timeIntervalSinceReferenceDate.isFinite else {
                throw .unsupportedValue("binary property lists carry finite dates, not \(CodecError.describing(date))")
            }
            let bits = date.timeIntervalSinceReferenceDate.bitPattern
            guard let object = Self.claim(bits, in: &dateObjects, next: offsets.count) else {
                return dateObjects[bits]!
            }
            startObject(object)
            bytes.append(BinaryPlistFormat.dateMarker)
            appendBigEndian(bits, size: 8)
            return object
        case .data(let data):
            guard let object = Self.claim(data, in: &dataObjects, next: offsets.count) else {
                return dataObjects[data]!
            }
            startObject(object)
            writeCount(data.count, type: .data)
            bytes.append(contentsOf: data)
            return object
        case .string(let string):
            return addString(string)
        case .array(let elements):
            let (object, first) = try startContainer(
                type: .array, count: elements.count, depth: depth)
            var reference = first
            for element in elements {
                references[reference] = try add(element, depth: depth + 1)
                reference += 1
            }
            return object
        case .dictionary(let entries):
            let (object, first) = try startContainer(
                type: .dictionary, count: entries.count, depth: depth)
            let order = Self.sortedIndices(of: entries)
            for (position, index) in order.enumerated() {
                references[first + position] = addString(entries[index].key)
            }
            for (position, index) in order.enumerated() {
                references[first + order.count + position] = try add(entries[index].value, depth: depth + 1)
            }
            return object
        }
    }

    /// Numbers a new object that starts at the current end of the file.
    private mutating func startObject() -> Int {
        offsets.append(bytes.count)
        return offsets.count - 1
    }

    /// Records that object `object` (the next number, as claimed) starts at the current end of the file.
    private mutating func startObject(_ object: Int) {
        assert(object == offsets.count)
        offsets.append(bytes.count)
    }

    /// Gives `key` the object number `next` in `table` unless it has one, in one hash lookup.
    /// - Returns: `next` when `key` is new, `nil` when it already has a number.
    private static func claim<Key: Hashable>(_ key: Key, in table: inout [Key: Int], next: Int) -> Int? {
        claimSlot(&table[key, default: -1], next: next)
    }

    private static func claimSlot(_ slot: inout Int, next: Int) -> Int? {
        guard slot < 0 else { return nil }
        slot = next
        return next
    }

    /// Numbers a container and reserves its references; its bytes are written by ``finish()``.
    /// - Returns: the container's object number and the index of its first reference in ``references``.
    private mutating func startContainer(
        type: BinaryPlistFormat.ObjectType, count: Int, depth: Int
    ) throws(CodecError) -> (object: Int, firstReference: Int) {
        guard depth < maxDepth else {
            throw .limitExceeded("the value is nested deeper than the limit of \(maxDepth)")
        }
        offsets.append(-1)
        let object = offsets.count - 1
        let referenceCount = type == .dictionary ? 2 * count : count
        pendingContainers.append(
            PendingContainer(object: object, type: type, count: count, firstReference: references.count))
        let firstReference = references.count
        for _ in 0..<referenceCount { references.append(0) }
        return (object, firstReference)
    }

    private mutating func addBool(_ flag: Bool) -> Int {
        if let object = flag ? trueObject : falseObject { return object }
        let object = startObject()
        bytes.append(flag ? BinaryPlistFormat.trueMarker : BinaryPlistFormat.falseMarker)
        if flag { trueObject = object } else { falseObject = object }
        return object
    }

    private mutating func addString(_ string: String) -> Int {
        let key = ExactString(string: string)
        guard let object = Self.claim(key, in: &stringObjects, next: offsets.count) else {
            return stringObjects[key]!
        }
        startObject(object)
        writeString(string)
        return object
    }

    /// Writes the pending containers, the offset table and the trailer.
    private mutating func finish() {
        let objectCount = offsets.count
        let referenceSize = Self.byteCount(UInt64(objectCount - 1))
        // Each container: a marker, at most 9 bytes of count, its references.
        bytes.reserveCapacity(bytes.count + pendingContainers.count * 10 + references.count * referenceSize)
        for container in pendingContainers {
            offsets[container.object] = bytes.count
            writeCount(container.count, type: container.type)
            let referenceCount = container.type == .dictionary ? 2 * container.count : container.count
            for reference in references[container.firstReference..<container.firstReference + referenceCount] {
                appendBigEndian(UInt64(reference), size: referenceSize)
            }
        }
        // Apple's reader wants the offset size to hold the offset table's own start.
        let offsetTableStart = bytes.count
        let offsetSize = Self.byteCount(UInt64(offsetTableStart))
        bytes.reserveCapacity(bytes.count + objectCount * offsetSize + BinaryPlistFormat.trailerSize)
        for offset in offsets {
            appendBigEndian(UInt64(offset), size: offsetSize)
        }
        bytes.append(contentsOf: repeatElement(0, count: 6))
        bytes.append(UInt8(offsetSize))
        bytes.append(UInt8(referenceSize))
        appendBigEndian(UInt64(objectCount), size: 8)
        appendBigEndian(0, size: 8)
        appendBigEndian(UInt64(offsetTableStart), size: 8)
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    static func byteCount(_ value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }

    /// The indices of `entries` in the order of their keys' UTF-8 bytes (that is, of their Unicode scalars).
    ///
    /// Keys are compared first by their first eight bytes packed big-endian into
    /// one number (zero-padded, which keeps the byte order), and only on a tie
    /// byte by byte; the sort moves indices, never strings.
    private static func sortedIndices(of entries: [String: SyncValue]) -> [Dictionary<String, SyncValue>.Index] {
        var keyed: [(prefix: UInt64, index: Dictionary<String, SyncValue>.Index)] = []
        keyed.reserveCapacity(entries.count)
        var index = entries.startIndex
        while index != entries.endIndex {
            var prefix: UInt64 = 0
            var taken = 0
            for byte in entries[index].key.utf8 {
                prefix = prefix << 8 | UInt64(byte)
                taken += 1
                if taken == 8 { break }
            }
            keyed.append((prefix << UInt64(8 * (8 - taken)), index))
            entries.formIndex(after: &index)
        }
        keyed.sort { lhs, rhs in
            if lhs.prefix != rhs.prefix { return lhs.prefix < rhs.prefix }
            return entries[lhs.index].key.utf8.lexicographicallyPrecedes(entries[rhs.index].key.utf8)
        }
        return keyed.map(\.index)
    }
}
