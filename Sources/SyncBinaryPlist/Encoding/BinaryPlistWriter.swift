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
///
/// Uniquing works on the bytes written: a scalar is written at the end of the file, its bytes are
/// looked up in an ``EncodedObjectTable``, and when an equal object is already there the new bytes are
/// dropped. An object's bytes name its type and its value exactly (strings by their Unicode scalars), so
/// equal bytes are equal values. A census of the value beforehand sizes the file, so that it is written
/// once into the array returned.
struct BinaryPlistWriter {
    /// The file being written: header, then objects.
    var output: ByteOutput
    /// The byte offset of each object, by object number (containers: filled in by ``finish()``).
    private var offsets: [Int] = []
    /// Containers whose bytes are not written yet.
    private var pendingContainers: [PendingContainer] = []
    /// The object numbers each pending container refers to, in one flat list.
    private var references: [Int] = []
    /// The deepest nesting of arrays and dictionaries accepted.
    private let maxDepth: Int
    /// The scalars written so far, by their bytes.
    private var objects: EncodedObjectTable
    private var falseObject: Int?
    private var trueObject: Int?
    /// Dictionary keys in order, for the dictionaries being written.
    private var keyOrder = SortedKeys()

    /// A container whose references are written by ``finish()``.
    private struct PendingContainer {
        var object: Int
        var type: BinaryPlistFormat.ObjectType
        var count: Int
        var firstReference: Int
    }

    private init(output: ByteOutput, maxDepth: Int, census: BinaryPlistCensus) {
        self.output = output
        self.maxDepth = maxDepth
        offsets.reserveCapacity(census.objects)
        references.reserveCapacity(census.references)
        pendingContainers.reserveCapacity(census.objects - census.scalars)
        objects = EncodedObjectTable(expectedCount: census.scalars)
    }

    /// Writes `value` as the top object and returns the whole file.
    static func encode(_ value: SyncValue, maxDepth: Int) throws(CodecError) -> [UInt8] {
        var census = BinaryPlistCensus(maxDepth: maxDepth)
        census.count(value, depth: 0)
        return try ByteOutput.bytes(capacity: census.fileSizeBound) { output throws(CodecError) in
            var writer = BinaryPlistWriter(output: output, maxDepth: maxDepth, census: census)
            defer { output = writer.output }
            BinaryPlistFormat.header.withUnsafeBufferPointer { writer.output.append(contentsOf: $0) }
            _ = try writer.add(value, depth: 0)
            writer.finish()
        }
    }

    /// Adds `value` (and everything in it) and returns its object number.
    private mutating func add(_ value: SyncValue, depth: Int) throws(CodecError) -> Int {
        switch value {
        case .null:
            throw .unsupportedValue("a binary property list cannot carry null")
        case .bool(let flag):
            return addBool(flag)
        case .integer(let integer):
            let start = output.count
            writeInteger(integer)
            return unique(from: start)
        case .unsignedInteger(let integer):
            let start = output.count
            if let signed = Int64(exactly: integer) {
                writeInteger(signed)
            } else {
                writeUnsignedInteger128(integer)
            }
            return unique(from: start)
        case .real(let real):
            let start = output.count
            output.reserve(9)
            output.appendUnchecked(BinaryPlistFormat.ObjectType.real.marker(low: 3))
            output.appendUncheckedBigEndian(real.bitPattern)
            return unique(from: start)
        case .date(let date):
            guard date.timeIntervalSinceReferenceDate.isFinite else {
                throw .unsupportedValue("binary property lists carry finite dates, not \(CodecError.describing(date))")
            }
            let start = output.count
            output.reserve(9)
            output.appendUnchecked(BinaryPlistFormat.dateMarker)
            output.appendUncheckedBigEndian(date.timeIntervalSinceReferenceDate.bitPattern)
            return unique(from: start)
        case .data(let data):
            let start = output.count
            writeCount(data.count, type: .data)
            data.withUnsafeBufferPointer { output.append(contentsOf: $0) }
            return unique(from: start)
        case .string(let string):
            return addString(string)
        case .array(let elements):
            let (object, first) = try startContainer(type: .array, count: elements.count, depth: depth)
            var reference = first
            for element in elements {
                references[reference] = try add(element, depth: depth + 1)
                reference += 1
            }
            return object
        case .dictionary(let entries):
            let (object, first) = try startContainer(type: .dictionary, count: entries.count, depth: depth)
            let count = entries.count
            let run = keyOrder.push(entries)
            let keys = entries.keys
            for position in run {
                references[first + position - run.lowerBound] = addString(keys[keyOrder.index(at: position)])
            }
            let values = entries.values
            for position in run {
                references[first + count + position - run.lowerBound] =
                    try add(values[keyOrder.index(at: position)], depth: depth + 1)
            }
            keyOrder.pop(run)
            return object
        }
    }

    /// The object number of the scalar just written from `start` to the end of the file: a new number
    /// when no equal object was written before, else the earlier object's (and the new bytes are dropped).
    @inline(__always)
    private mutating func unique(from start: Int) -> Int {
        let candidate = offsets.count
        let existing = objects.claim(
            UnsafeRawBufferPointer(start: output.start + start, count: output.count - start),
            in: UnsafeRawPointer(output.start), offsets: offsets, next: candidate)
        if existing != candidate {
            output.truncate(to: start)
            return existing
        }
        offsets.append(start)
        return candidate
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
        let firstReference = references.count
        pendingContainers.append(
            PendingContainer(object: object, type: type, count: count, firstReference: firstReference))
        references.append(contentsOf: repeatElement(0, count: referenceCount))
        return (object, firstReference)
    }

    private mutating func addBool(_ flag: Bool) -> Int {
        if let object = flag ? trueObject : falseObject { return object }
        offsets.append(output.count)
        let object = offsets.count - 1
        output.append(flag ? BinaryPlistFormat.trueMarker : BinaryPlistFormat.falseMarker)
        if flag { trueObject = object } else { falseObject = object }
        return object
    }

    @inline(__always)
    private mutating func addString(_ string: String) -> Int {
        let start = output.count
        writeString(string)
        return unique(from: start)
    }

    /// Writes the pending containers, the offset table and the trailer.
    private mutating func finish() {
        let objectCount = offsets.count
        let referenceSize = Self.byteCount(UInt64(objectCount - 1))
        // Each container: a marker, at most 9 bytes of count, its references.
        output.reserve(pendingContainers.count * 10 + references.count * referenceSize)
        references.withUnsafeBufferPointer { references in
            for container in pendingContainers {
                offsets[container.object] = output.count
                writeCount(container.count, type: container.type)
                let referenceCount = container.type == .dictionary ? 2 * container.count : container.count
                appendSized(references[container.firstReference..<container.firstReference + referenceCount], size: referenceSize)
            }
        }
        // Apple's reader wants the offset size to hold the offset table's own start.
        let offsetTableStart = output.count
        let offsetSize = Self.byteCount(UInt64(offsetTableStart))
        output.reserve(objectCount * offsetSize + BinaryPlistFormat.trailerSize)
        offsets.withUnsafeBufferPointer { offsets in appendSized(offsets[...], size: offsetSize) }
        output.reserve(BinaryPlistFormat.trailerSize)
        for _ in 0..<6 { output.appendUnchecked(0) }
        output.appendUnchecked(UInt8(offsetSize))
        output.appendUnchecked(UInt8(referenceSize))
        output.appendUncheckedBigEndian(UInt64(objectCount))
        output.appendUncheckedBigEndian(UInt64(0))
        output.appendUncheckedBigEndian(UInt64(offsetTableStart))
    }

    /// Appends each of `values` in `size` bytes, most significant first (room for them must be reserved).
    private mutating func appendSized(_ values: Slice<UnsafeBufferPointer<Int>>, size: Int) {
        switch size {
        case 1: for value in values { output.appendUnchecked(UInt8(truncatingIfNeeded: value)) }
        case 2: for value in values { output.appendUncheckedBigEndian(UInt16(truncatingIfNeeded: value)) }
        case 4: for value in values { output.appendUncheckedBigEndian(UInt32(truncatingIfNeeded: value)) }
        default: for value in values { output.appendUncheckedBigEndian(UInt64(truncatingIfNeeded: value)) }
        }
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    @inline(__always)
    static func byteCount(_ value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }
}

/// How many objects and references a value makes at most (before uniquing), and how many bytes its file
/// takes at most: what the writer reserves before it writes.
struct BinaryPlistCensus {
    /// Containers deeper than this are not counted (the writer refuses them).
    let maxDepth: Int
    /// Objects, every scalar counted as new.
    private(set) var objects = 0
    /// Scalar objects (keys included), every one counted as new.
    private(set) var scalars = 0
    /// References inside containers.
    private(set) var references = 0
    /// The bytes of the scalars and of the containers' markers and counts.
    private(set) var objectBytes = 0

    /// A census of nothing yet.
    init(maxDepth: Int) {
        self.maxDepth = maxDepth
    }

    /// Counts `value`, nested in `depth` containers.
    mutating func count(_ value: SyncValue, depth: Int) {
        switch value {
        case .null, .bool:
            addScalar(bytes: 1)
        case .integer(let integer):
            addScalar(bytes: integer < 0 ? 9 : 1 + BinaryPlistWriter.byteCount(UInt64(integer)))
        case .unsignedInteger:
            addScalar(bytes: 17)
        case .real, .date:
            addScalar(bytes: 9)
        case .data(let data):
            addScalar(bytes: BinaryPlistWriter.countSize(data.count) + data.count)
        case .string(let string):
            addString(string)
        case .array(let elements):
            objects += 1
            guard depth < maxDepth else { return }
            objectBytes += BinaryPlistWriter.countSize(elements.count)
            references += elements.count
            for element in elements { count(element, depth: depth + 1) }
        case .dictionary(let entries):
            objects += 1
            guard depth < maxDepth else { return }
            objectBytes += BinaryPlistWriter.countSize(entries.count)
            references += 2 * entries.count
            for (key, element) in entries {
                addString(key)
                count(element, depth: depth + 1)
            }
        }
    }

    @inline(__always)
    private mutating func addScalar(bytes: Int) {
        objects += 1
        scalars += 1
        objectBytes += bytes
    }

    /// Counts a string object: its exact size when it is ASCII, else twice its UTF-16 code units.
    @inline(__always)
    private mutating func addString(_ string: String) {
        let utf8 = string.utf8.count
        let utf16 = string.utf16.count
        addScalar(bytes: utf16 == utf8 ? BinaryPlistWriter.countSize(utf8) + utf8 : BinaryPlistWriter.countSize(utf16) + 2 * utf16)
    }

    /// At least the size of the file: header, objects, references, offset table and trailer.
    var fileSizeBound: Int {
        let referenceSize = BinaryPlistWriter.byteCount(UInt64(Swift.max(objects - 1, 0)))
        let objectArea = BinaryPlistFormat.header.count + objectBytes + references * referenceSize
        let offsetSize = BinaryPlistWriter.byteCount(UInt64(objectArea))
        return objectArea + objects * offsetSize + BinaryPlistFormat.trailerSize
    }
}

/// The scalar objects of a file being written, found by their bytes: an open-addressing hash table of
/// object numbers whose bytes are compared in the file itself.
///
/// Each slot holds the upper 32 bits of the object's hash (which also place it) and its number plus one
/// (zero: empty). The hash mixes every byte of the object, eight at a time, with multiplications in
/// the manner of wyhash, from a seed drawn at random once per process (from the standard library's
/// `Hasher`), so that colliding input cannot be prepared in advance.
struct EncodedObjectTable {
    private var slots: [UInt64]
    private var mask: Int
    private var count = 0
    /// The seed of every hash of this table.
    private let seed = processSeed

    /// A random number drawn once per process.
    private static let processSeed: UInt64 = {
        var hasher = Hasher()
        hasher.combine(0x6270_6C69_7374_3030 as UInt64)  // "bplist00"
        return UInt64(truncatingIfNeeded: hasher.finalize())
    }()

    /// The high and low halves of the full product of `lhs` and `rhs`, combined.
    @inline(__always)
    private static func mix(_ lhs: UInt64, _ rhs: UInt64) -> UInt64 {
        let product = lhs.multipliedFullWidth(by: rhs)
        return product.high ^ product.low
    }

    /// The hash of `bytes` under `seed`.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        let count = bytes.count
        var hash = mix(seed ^ 0xA076_1D64_78BD_642F, UInt64(truncatingIfNeeded: count) ^ 0xE703_7ED1_A0B4_28DB)
        guard let base = bytes.baseAddress else { return hash }
        var index = 0
        while index + 16 <= count {
            let first = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let second = base.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
            hash = mix(first ^ 0x8EBC_6AF0_9C88_C6E3, second ^ hash)
            index += 16
        }
        var tail: UInt64 = 0
        if index + 8 <= count {
            tail = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
            hash = mix(tail ^ 0x5899_65CC_7537_4CC3, hash ^ 0x1D8E_4E27_C47D_124F)
            tail = 0
        }
        var shift: UInt64 = 0
        while index < count {
            tail |= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) << shift
            shift += 8
            index += 1
        }
        hash = mix(tail ^ 0xA076_1D64_78BD_642F, hash ^ 0xE703_7ED1_A0B4_28DB)
        return mix(hash, 0x8EBC_6AF0_9C88_C6E3)
    }

    /// A table sized for about `expectedCount` objects (it grows as needed).
    init(expectedCount: Int) {
        var capacity = 256
        while capacity < Swift.min(expectedCount, 1 << 16) * 2 { capacity <<= 1 }
        slots = Array(repeating: 0, count: capacity)
        mask = capacity - 1
    }

    /// The number of the object whose bytes equal `bytes`, or `next` (which is then recorded for them)
    /// when there is none. Object `n` starts at `offsets[n]` of `file`.
    @inline(__always)
    mutating func claim(_ bytes: UnsafeRawBufferPointer, in file: UnsafeRawPointer, offsets: [Int], next: Int) -> Int {
        let tag = Self.hash(bytes, seed: seed) >> 32
        var slot = Int(truncatingIfNeeded: tag) & mask
        let found: Int? = slots.withUnsafeMutableBufferPointer { slots in
            while true {
                let entry = slots[slot]
                if entry == 0 { break }
                if entry >> 32 == tag {
                    let object = Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1
                    if Self.equal(file + offsets[object], bytes) { return object }
                }
                slot = (slot + 1) & mask
            }
            // Past what a slot holds, an object is written again rather than found.
            if next < 0xFFFF_FFFF { slots[slot] = tag << 32 | UInt64(next + 1) }
            return nil
        }
        if let found { return found }
        count += 1
        if count * 2 > slots.count { grow() }
        return next
    }

    /// Whether the `bytes.count` bytes at `start` are `bytes`, compared eight at a time.
    @inline(__always)
    private static func equal(_ start: UnsafeRawPointer, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let other = UnsafeRawPointer(bytes.baseAddress!)
        let count = bytes.count
        var index = 0
        while index + 8 <= count {
            if start.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                != other.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            {
                return false
            }
            index += 8
        }
        while index < count {
            if start.load(fromByteOffset: index, as: UInt8.self) != other.load(fromByteOffset: index, as: UInt8.self) {
                return false
            }
            index += 1
        }
        return true
    }

    private mutating func grow() {
        let newCapacity = slots.count * 4
        var newSlots = [UInt64](repeating: 0, count: newCapacity)
        let newMask = newCapacity - 1
        newSlots.withUnsafeMutableBufferPointer { newSlots in
            for entry in slots where entry != 0 {
                var slot = Int(truncatingIfNeeded: entry >> 32) & newMask
                while newSlots[slot] != 0 { slot = (slot + 1) & newMask }
                newSlots[slot] = entry
            }
        }
        slots = newSlots
        mask = newMask
    }
}
