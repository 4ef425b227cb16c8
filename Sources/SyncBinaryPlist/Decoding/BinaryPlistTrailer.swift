import SyncCore

/// The 32-byte trailer at the end of a `bplist00` file, checked against the
/// file before anything it describes is trusted.
///
/// Layout: 6 unused bytes, the offset size, the reference size, then three
/// big-endian 64-bit numbers: the object count, the top object's number and
/// the offset of the offset table.
struct BinaryPlistTrailer {
    /// The size of one offset table entry, 1 to 8 bytes.
    let offsetSize: Int
    /// The size of one object reference, 1 to 8 bytes.
    let referenceSize: Int
    /// How many objects the offset table lists.
    let objectCount: Int
    /// The number of the top object.
    let topObject: Int
    /// Where the offset table starts; the object area is the bytes between the header and here.
    let offsetTableStart: Int

    /// Reads and checks the header and the trailer of `input`.
    ///
    /// - Throws: ``SyncCore/CodecError/Code/malformedInput`` when the file is
    ///   too short, lacks the `bplist00` header, or its trailer holds sizes
    ///   outside 1–8 or too small for what they must hold (as Apple's reader
    ///   requires: the offset size holds the offset table's start, the
    ///   reference size every object number), no objects, a top object past
    ///   the last, or an offset table that does not fill the space between the
    ///   object area and the trailer.
    init(of input: UnsafeBufferPointer<UInt8>) throws(CodecError) {
        guard input.count >= BinaryPlistFormat.minimumSize else {
            throw .malformedInput(
                "\(input.count) bytes is too short for a binary property list (at least \(BinaryPlistFormat.minimumSize))",
                offset: 0)
        }
        for (index, byte) in BinaryPlistFormat.header.enumerated() where input[index] != byte {
            throw .malformedInput("the input does not start with the header \"bplist00\"", offset: index)
        }
        let start = input.count - BinaryPlistFormat.trailerSize
        offsetSize = Int(input[start + 6])
        referenceSize = Int(input[start + 7])
        let objectCount = Self.readUInt64(input, at: start + 8)
        let topObject = Self.readUInt64(input, at: start + 16)
        let offsetTableStart = Self.readUInt64(input, at: start + 24)

        guard (1...8).contains(offsetSize) else {
            throw .malformedInput("the trailer gives an offset size of \(offsetSize) bytes (1 to 8 allowed)", offset: start + 6)
        }
        guard (1...8).contains(referenceSize) else {
            throw .malformedInput(
                "the trailer gives an object reference size of \(referenceSize) bytes (1 to 8 allowed)", offset: start + 7)
        }
        guard objectCount >= 1 else {
            throw .malformedInput("the trailer lists no objects", offset: start + 8)
        }
        guard topObject < objectCount else {
            throw .malformedInput("the top object \(topObject) is past the last of \(objectCount) objects", offset: start + 16)
        }
        guard offsetTableStart > UInt64(BinaryPlistFormat.header.count), offsetTableStart <= UInt64(start) else {
            throw .malformedInput(
                "the offset table start \(offsetTableStart) is outside the object area (9 to \(start))", offset: start + 24)
        }
        // The table fills exactly the bytes between its start and the trailer.
        let tableSize = UInt64(start) - offsetTableStart
        guard objectCount <= tableSize / UInt64(offsetSize), objectCount * UInt64(offsetSize) == tableSize else {
            throw .malformedInput(
                "an offset table of \(objectCount) entries of \(offsetSize) bytes does not fill the \(tableSize) bytes before the trailer",
                offset: Int(offsetTableStart))
        }
        if offsetSize < 8 && offsetTableStart >= UInt64(1) << UInt64(8 * offsetSize) {
            throw .malformedInput(
                "the offset table start \(offsetTableStart) does not fit the offset size of \(offsetSize) bytes", offset: start + 6)
        }
        if referenceSize < 8 && objectCount > UInt64(1) << UInt64(8 * referenceSize) {
            throw .malformedInput(
                "\(objectCount) objects cannot be referred to in \(referenceSize)-byte references", offset: start + 7)
        }
        self.objectCount = Int(objectCount)
        self.topObject = Int(topObject)
        self.offsetTableStart = Int(offsetTableStart)
    }

    /// The big-endian 64-bit number at `offset` (the caller checked the bounds).
    private static func readUInt64(_ input: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<offset + 8 { value = value << 8 | UInt64(input[index]) }
        return value
    }
}
