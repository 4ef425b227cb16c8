#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Reads the object graph of a `bplist00` file into a ``SyncValue``.
///
/// Nothing in the file is trusted before it is checked: every offset must
/// point into the object area, every reference must name an existing object,
/// every count must fit in the bytes that remain before the offset table (so
/// a length claiming 2^60 bytes is refused before anything is allocated), a
/// container may not refer to one of its own ancestors (a cycle), and the
/// depth and value-count limits hold. Objects referred to more than once are
/// read once per reference, and each reading counts towards the value limit,
/// so a small file that shares containers cannot expand without bound.
/// The reader lives only inside the `withUnsafeBufferPointer` scope of
/// ``BinaryPlistCodec/decode(_:)``.
struct BinaryPlistReader {
    /// The whole file.
    let input: UnsafeBufferPointer<UInt8>
    /// The checked trailer.
    let trailer: BinaryPlistTrailer
    /// The limits to enforce.
    let limits: CodecLimits
    /// Where the object area ends (the offset table's start): no object may reach past it.
    let objectAreaEnd: Int
    /// How many values have been read so far.
    private var valueCount = 0
    /// One bit per object: set while the object is a container being read, to catch cycles.
    private var openContainers: [UInt64]

    init(input: UnsafeBufferPointer<UInt8>, limits: CodecLimits) throws(CodecError) {
        self.input = input
        self.limits = limits
        trailer = try BinaryPlistTrailer(of: input)
        objectAreaEnd = trailer.offsetTableStart
        openContainers = Array(repeating: 0, count: (trailer.objectCount + 63) / 64)
    }

    /// Reads the top object and everything it refers to.
    mutating func readDocument() throws(CodecError) -> SyncValue {
        try readObject(trailer.topObject, depth: 0)
    }

    /// Reads object number `object`, which sits `depth` containers deep.
    mutating func readObject(_ object: Int, depth: Int) throws(CodecError) -> SyncValue {
        valueCount += 1
        guard valueCount <= limits.maxElementCount else {
            throw .limitExceeded("more than \(limits.maxElementCount) values")
        }
        let start = try offset(of: object)
        let marker = input[start]
        switch BinaryPlistFormat.ObjectType(marker: marker) {
        case .singleByte:
            return try readSingleByte(marker, at: start)
        case .integer:
            return try readInteger(marker, at: start)
        case .real:
            return .real(try readReal(marker, at: start))
        case .date:
            guard marker == BinaryPlistFormat.dateMarker else { throw unknownMarker(marker, at: start) }
            let seconds = Double(bitPattern: try readBigEndian(at: start + 1, size: 8, what: "date"))
            guard seconds.isFinite else {
                throw .malformedInput("the date is not a finite number of seconds (\(seconds))", offset: start)
            }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .data:
            let (count, payload) = try readCount(marker, at: start, unitSize: 1, what: "data")
            return .data(Array(UnsafeBufferPointer(rebasing: input[payload..<payload + count])))
        case .asciiString, .utf16String:
            return .string(try readString(marker, at: start))
        case .uid:
            return try readUID(marker, at: start, depth: depth)
        case .array:
            return try readArray(object, marker: marker, at: start, depth: depth)
        case .dictionary:
            return try readDictionary(object, marker: marker, at: start, depth: depth)
        case nil:
            throw unknownMarker(marker, at: start)
        }
    }

    /// The byte offset of object number `object` (a checked reference), checked to lie in the object area.
    func offset(of object: Int) throws(CodecError) -> Int {
        let entry = trailer.offsetTableStart + object * trailer.offsetSize
        var offset: UInt64 = 0
        for index in entry..<entry + trailer.offsetSize { offset = offset << 8 | UInt64(input[index]) }
        guard offset >= UInt64(BinaryPlistFormat.header.count), offset < UInt64(objectAreaEnd) else {
            throw .malformedInput(
                "object \(object) has offset \(offset), outside the object area (8 to \(objectAreaEnd - 1))", offset: entry)
        }
        return Int(offset)
    }

    /// The object reference at `position`, checked to name an existing object.
    func readReference(at position: Int) throws(CodecError) -> Int {
        var reference: UInt64 = 0
        for index in position..<position + trailer.referenceSize { reference = reference << 8 | UInt64(input[index]) }
        guard reference < UInt64(trailer.objectCount) else {
            throw .malformedInput(
                "a reference to object \(reference), past the last of \(trailer.objectCount) objects", offset: position)
        }
        return Int(reference)
    }

    /// Checks that a container may open at `depth` and is not already open (a cycle), and marks it open.
    private mutating func enterContainer(_ object: Int, at start: Int, depth: Int) throws(CodecError) {
        guard depth < limits.maxDepth else {
            throw .limitExceeded("the input is nested deeper than the limit of \(limits.maxDepth)", offset: start)
        }
        let bit: UInt64 = 1 << UInt64(object & 63)
        guard openContainers[object >> 6] & bit == 0 else {
            throw .malformedInput("object \(object) contains itself (a reference cycle)", offset: start)
        }
        openContainers[object >> 6] |= bit
    }

    private mutating func leaveContainer(_ object: Int) {
        openContainers[object >> 6] &= ~(1 << UInt64(object & 63))
    }

    private mutating func readArray(_ object: Int, marker: UInt8, at start: Int, depth: Int) throws(CodecError) -> SyncValue {
        let (count, payload) = try readCount(marker, at: start, unitSize: trailer.referenceSize, what: "array")
        try enterContainer(object, at: start, depth: depth)
        var elements: [SyncValue] = []
        elements.reserveCapacity(count)
        var position = payload
        for _ in 0..<count {
            elements.append(try readObject(try readReference(at: position), depth: depth + 1))
            position += trailer.referenceSize
        }
        leaveContainer(object)
        return .array(elements)
    }

    private mutating func readDictionary(
        _ object: Int, marker: UInt8, at start: Int, depth: Int
    ) throws(CodecError) -> SyncValue {
        let (count, payload) = try readCount(marker, at: start, unitSize: 2 * trailer.referenceSize, what: "dictionary")
        try enterContainer(object, at: start, depth: depth)
        var entries: [String: SyncValue] = Dictionary(minimumCapacity: count)
        let valuesStart = payload + count * trailer.referenceSize
        for index in 0..<count {
            let keyPosition = payload + index * trailer.referenceSize
            let key = try readKey(try readReference(at: keyPosition))
            let value = try readObject(
                try readReference(at: valuesStart + index * trailer.referenceSize), depth: depth + 1)
            guard entries.updateValue(value, forKey: key) == nil else {
                throw .malformedInput("the dictionary holds the key \(CodecError.quoted(key)) twice", offset: keyPosition)
            }
        }
        leaveContainer(object)
        return .dictionary(entries)
    }

    /// Reads a dictionary key, which must be a string object.
    private mutating func readKey(_ object: Int) throws(CodecError) -> String {
        valueCount += 1
        guard valueCount <= limits.maxElementCount else {
            throw .limitExceeded("more than \(limits.maxElementCount) values")
        }
        let start = try offset(of: object)
        let marker = input[start]
        let type = BinaryPlistFormat.ObjectType(marker: marker)
        guard type == .asciiString || type == .utf16String else {
            throw .malformedInput(
                "a dictionary key is object \(object) with marker 0x\(String(marker, radix: 16)), not a string", offset: start)
        }
        return try readString(marker, at: start)
    }

    /// Reads a UID as Foundation's decoders present it: `["CF$UID": n]`.
    private mutating func readUID(_ marker: UInt8, at start: Int, depth: Int) throws(CodecError) -> SyncValue {
        let size = Int(marker & 0x0F) + 1
        guard size <= 8 else { throw unknownMarker(marker, at: start) }
        // The UID becomes a dictionary, so it takes a level of nesting.
        guard depth < limits.maxDepth else {
            throw .limitExceeded("the input is nested deeper than the limit of \(limits.maxDepth)", offset: start)
        }
        let value = try readBigEndian(at: start + 1, size: size, what: "UID")
        valueCount += 2
        guard valueCount <= limits.maxElementCount else {
            throw .limitExceeded("more than \(limits.maxElementCount) values")
        }
        return .dictionary([BinaryPlistFormat.uidKey: .integer(exactly: value)])
    }

    /// The error for a marker that names no object type this codec reads.
    func unknownMarker(_ marker: UInt8, at offset: Int) -> CodecError {
        .malformedInput("unknown or unsupported object marker 0x\(String(marker, radix: 16))", offset: offset)
    }
}
