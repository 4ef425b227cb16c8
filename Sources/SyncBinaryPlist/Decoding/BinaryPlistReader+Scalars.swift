import SyncCore

extension BinaryPlistReader {
    /// Reads `size` bytes (at most 8) at `position` as a big-endian number, checking they lie in the object area.
    func readBigEndian(at position: Int, size: Int, what: String) throws(CodecError) -> UInt64 {
        guard size <= objectAreaEnd - position else {
            throw .malformedInput("the \(what) needs \(size) bytes and runs past the object area", offset: position)
        }
        var value: UInt64 = 0
        for index in position..<position + size { value = value << 8 | UInt64(input[index]) }
        return value
    }

    /// Reads the count of the object with `marker` at `start` and checks that
    /// `count` units of `unitSize` bytes fit before the end of the object area.
    /// - Returns: the count and the offset of the object's first unit.
    func readCount(
        _ marker: UInt8, at start: Int, unitSize: Int, what: String
    ) throws(CodecError) -> (count: Int, payload: Int) {
        var count = UInt64(marker & 0x0F)
        var payload = start + 1
        if marker & 0x0F == BinaryPlistFormat.extendedCount {
            guard payload < objectAreaEnd else {
                throw .malformedInput("the \(what)'s count runs past the object area", offset: payload)
            }
            let countMarker = input[payload]
            guard BinaryPlistFormat.ObjectType(marker: countMarker) == .integer, countMarker & 0x0F <= 3 else {
                throw .malformedInput(
                    "the \(what)'s count has marker 0x\(String(countMarker, radix: 16)), not an integer of 1 to 8 bytes",
                    offset: payload)
            }
            let size = 1 << Int(countMarker & 0x0F)
            count = try readBigEndian(at: payload + 1, size: size, what: "\(what)'s count")
            payload += 1 + size
        }
        let room = UInt64(objectAreaEnd - payload) / UInt64(unitSize)
        guard count <= room else {
            throw .malformedInput(
                "the \(what) claims \(count) entries of \(unitSize) bytes but only \(objectAreaEnd - payload) bytes remain",
                offset: start)
        }
        return (Int(count), payload)
    }

    /// Reads `false`, `true`, or refuses the other one-byte objects (null, fill, URL, UUID).
    func readSingleByte(_ marker: UInt8, at start: Int) throws(CodecError) -> SyncValue {
        switch marker {
        case BinaryPlistFormat.falseMarker: return .bool(false)
        case BinaryPlistFormat.trueMarker: return .bool(true)
        case 0x00:
            throw .malformedInput("the null object (0x00) is not a property list value", offset: start)
        default:
            throw unknownMarker(marker, at: start)
        }
    }

    /// Reads an integer of 1, 2, 4 (unsigned), 8 (signed) or 16 bytes (signed, kept when it fits `UInt64` or `Int64`).
    func readInteger(_ marker: UInt8, at start: Int) throws(CodecError) -> SyncValue {
        switch marker & 0x0F {
        case 0, 1, 2:
            return .integer(Int64(try readBigEndian(at: start + 1, size: 1 << Int(marker & 0x0F), what: "integer")))
        case 3:
            return .integer(Int64(bitPattern: try readBigEndian(at: start + 1, size: 8, what: "integer")))
        case 4:
            let high = try readBigEndian(at: start + 1, size: 8, what: "integer")
            let low = try readBigEndian(at: start + 9, size: 8, what: "integer")
            if high == 0 { return .integer(exactly: low) }
            if high == UInt64.max && low >> 63 == 1 { return .integer(Int64(bitPattern: low)) }
            throw .limitExceeded(
                "a 16-byte integer outside the range -2^63 to 2^64-1 that this codec carries", offset: start)
        default:
            throw unknownMarker(marker, at: start)
        }
    }

    /// Reads a real of 4 or 8 bytes.
    func readReal(_ marker: UInt8, at start: Int) throws(CodecError) -> Double {
        switch marker & 0x0F {
        case 2:
            let bits = try readBigEndian(at: start + 1, size: 4, what: "real")
            return Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
        case 3:
            return Double(bitPattern: try readBigEndian(at: start + 1, size: 8, what: "real"))
        default:
            throw unknownMarker(marker, at: start)
        }
    }

    /// Reads an ASCII or a UTF-16BE string object.
    func readString(_ marker: UInt8, at start: Int) throws(CodecError) -> String {
        if BinaryPlistFormat.ObjectType(marker: marker) == .asciiString {
            let (count, payload) = try readCount(marker, at: start, unitSize: 1, what: "string")
            let bytes = UnsafeBufferPointer(rebasing: input[payload..<payload + count])
            guard BinaryPlistWriter.isASCII(bytes) else {
                throw .malformedInput("an ASCII string holds a byte above 0x7F", offset: payload)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let (count, payload) = try readCount(marker, at: start, unitSize: 2, what: "string")
        guard let string = UTF16BigEndian.string(
            from: UnsafeBufferPointer(rebasing: input[payload..<payload + 2 * count]))
        else {
            throw .malformedInput("a UTF-16 string holds an unpaired surrogate", offset: payload)
        }
        return string
    }
}
