import SyncCore

extension BinaryPlistWriter {
    /// Appends the low `size` bytes of `value`, most significant first.
    @inline(__always)
    mutating func appendBigEndian(_ value: UInt64, size: Int) {
        output.reserve(8)
        switch size {
        case 1: output.appendUnchecked(UInt8(truncatingIfNeeded: value))
        case 2: output.appendUncheckedBigEndian(UInt16(truncatingIfNeeded: value))
        case 4: output.appendUncheckedBigEndian(UInt32(truncatingIfNeeded: value))
        default: output.appendUncheckedBigEndian(value)
        }
    }

    /// Writes an integer object as Apple does: non-negative values in the
    /// fewest of 1, 2, 4 bytes (unsigned) or 8 bytes; negative values in 8
    /// bytes, two's complement.
    @inline(__always)
    mutating func writeInteger(_ value: Int64) {
        let size = value < 0 ? 8 : Self.byteCount(UInt64(value))
        output.reserve(9)
        output.appendUnchecked(BinaryPlistFormat.ObjectType.integer.marker(low: Self.sizeExponent(size)))
        appendBigEndian(UInt64(bitPattern: value), size: size)
    }

    /// Writes an integer above `Int64.max` as Apple and `plistlib` do: 16
    /// bytes, two's complement, the high eight bytes zero.
    mutating func writeUnsignedInteger128(_ value: UInt64) {
        output.reserve(17)
        output.appendUnchecked(BinaryPlistFormat.ObjectType.integer.marker(low: 4))
        output.appendUncheckedBigEndian(UInt64(0))
        output.appendUncheckedBigEndian(value)
    }

    /// Writes an object's marker with its count: in the low nibble when below
    /// 15, else `0xF` in the nibble and the count as an integer object.
    @inline(__always)
    mutating func writeCount(_ count: Int, type: BinaryPlistFormat.ObjectType) {
        output.reserve(10)
        if count < 15 {
            output.appendUnchecked(type.marker(low: UInt8(truncatingIfNeeded: count)))
        } else {
            output.appendUnchecked(type.marker(low: BinaryPlistFormat.extendedCount))
            let size = Self.byteCount(UInt64(count))
            output.appendUnchecked(BinaryPlistFormat.ObjectType.integer.marker(low: Self.sizeExponent(size)))
            appendBigEndian(UInt64(count), size: size)
        }
    }

    /// The size of an object marker with its count, as ``writeCount(_:type:)`` writes it.
    @inline(__always)
    static func countSize(_ count: Int) -> Int {
        count < 15 ? 1 : 2 + byteCount(UInt64(count))
    }

    /// Writes a string object: ASCII when every byte is below 0x80, else UTF-16BE.
    @inline(__always)
    mutating func writeString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            if Self.isASCII(utf8) {
                writeCount(utf8.count, type: .asciiString)
                output.append(contentsOf: utf8)
            } else {
                writeUTF16(fromValidUTF8: utf8)
            }
        }
    }

    /// Transcodes valid UTF-8 to a UTF-16BE string object.
    private mutating func writeUTF16(fromValidUTF8 utf8: UnsafeBufferPointer<UInt8>) {
        // One code unit per scalar, two for a scalar of four UTF-8 bytes.
        var unitCount = 0
        for byte in utf8 {
            if byte & 0xC0 != 0x80 { unitCount += 1 }
            if byte >= 0xF0 { unitCount += 1 }
        }
        writeCount(unitCount, type: .utf16String)
        output.reserve(2 * unitCount)
        var index = 0
        let count = utf8.count
        while index < count {
            let lead = UInt32(utf8[index])
            var scalar: UInt32
            if lead < 0x80 {
                scalar = lead
                index += 1
            } else if lead < 0xE0 {
                scalar = (lead & 0x1F) << 6 | UInt32(utf8[index + 1] & 0x3F)
                index += 2
            } else if lead < 0xF0 {
                scalar = (lead & 0x0F) << 12 | UInt32(utf8[index + 1] & 0x3F) << 6 | UInt32(utf8[index + 2] & 0x3F)
                index += 3
            } else {
                scalar = (lead & 0x07) << 18 | UInt32(utf8[index + 1] & 0x3F) << 12
                    | UInt32(utf8[index + 2] & 0x3F) << 6 | UInt32(utf8[index + 3] & 0x3F)
                index += 4
            }
            if scalar >= 0x1_0000 {
                scalar -= 0x1_0000
                output.appendUncheckedBigEndian(UInt16(truncatingIfNeeded: 0xD800 | scalar >> 10))
                output.appendUncheckedBigEndian(UInt16(truncatingIfNeeded: 0xDC00 | scalar & 0x3FF))
            } else {
                output.appendUncheckedBigEndian(UInt16(truncatingIfNeeded: scalar))
            }
        }
    }

    /// Whether every byte is below 0x80, eight bytes at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0
        var combined: UInt64 = 0
        while index + 8 <= bytes.count {
            combined |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            combined |= UInt64(bytes[index])
            index += 1
        }
        return combined & 0x8080_8080_8080_8080 == 0
    }

    /// The low nibble of an integer marker for a size of 1, 2, 4, 8 or 16 bytes.
    @inline(__always)
    static func sizeExponent(_ size: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: size.trailingZeroBitCount)
    }
}
