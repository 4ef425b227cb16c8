/// Appends Unicode scalars to a byte buffer as UTF-8.
enum UTF8Encoding {
    /// Appends the one to four UTF-8 bytes of `scalar`.
    @inline(__always)
    static func append(_ scalar: Unicode.Scalar, to bytes: inout [UInt8]) {
        let value = scalar.value
        switch value {
        case 0..<0x80:
            bytes.append(UInt8(value))
        case 0x80..<0x800:
            bytes.append(0xC0 | UInt8(value >> 6))
            bytes.append(0x80 | UInt8(value & 0x3F))
        case 0x800..<0x10000:
            bytes.append(0xE0 | UInt8(value >> 12))
            bytes.append(0x80 | UInt8((value >> 6) & 0x3F))
            bytes.append(0x80 | UInt8(value & 0x3F))
        default:
            bytes.append(0xF0 | UInt8(value >> 18))
            bytes.append(0x80 | UInt8((value >> 12) & 0x3F))
            bytes.append(0x80 | UInt8((value >> 6) & 0x3F))
            bytes.append(0x80 | UInt8(value & 0x3F))
        }
    }
}
