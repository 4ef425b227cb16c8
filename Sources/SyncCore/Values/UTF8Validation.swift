/// Strings made from bytes that must be valid UTF-8, as decoders read them: for codec readers.
public enum UTF8Validation {
    /// The string `bytes` spell, or `nil` when they are not valid UTF-8.
    ///
    /// Most text a decoder meets (keys, names, numbers as text) is ASCII, which is always valid
    /// UTF-8: it is turned into a string without the standard library's generic validation, which
    /// looks up type metadata on every call and was a tenth of a server's time spent reading records.
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if asciiPrefix(bytes) == bytes.count { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether `bytes` are valid UTF-8; ASCII is checked without the standard library's validation.
    package static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        classify(bytes) != nil
    }

    /// Whether `bytes` are ASCII (`true`), other valid UTF-8 (`false`), or not UTF-8 (`nil`). ASCII,
    /// the common case, is checked eight bytes at a time.
    @inlinable @inline(__always)
    public static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard let base = bytes.baseAddress else { return true }
        let asciiEnd = asciiPrefix(base, count: bytes.count, from: 0)
        if asciiEnd == bytes.count { return true }
        return isValid(base, count: bytes.count, from: asciiEnd) ? false : nil
    }

    /// The length of the run of ASCII bytes `bytes` start with.
    @inlinable @inline(__always)
    public static func asciiPrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        return asciiPrefix(base, count: bytes.count, from: 0)
    }

    /// The end of the run of ASCII bytes at `start` of the `count` bytes at `base`.
    @inlinable @inline(__always)
    public static func asciiPrefix(_ base: UnsafePointer<UInt8>, count: Int, from start: Int) -> Int {
        let raw = UnsafeRawPointer(base)
        var index = start
        while index + 8 <= count, raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
            index += 8
        }
        while index < count, base[index] < 0x80 { index += 1 }
        return index
    }

    /// Whether the `count` bytes at `base` are valid UTF-8 from `start` on: the well-formed byte
    /// sequences of the Unicode Standard's table 3-7 (no overlong forms, no surrogates, nothing
    /// above U+10FFFF).
    public static func isValid(_ base: UnsafePointer<UInt8>, count: Int, from start: Int) -> Bool {
        var index = start
        while index < count {
            let lead = base[index]
            if lead < 0x80 {
                index = asciiPrefix(base, count: count, from: index + 1)
                continue
            }
            // The sequence's length, and the range its second byte must fall in (table 3-7); the bytes
            // after the second are always 0x80...0xBF.
            let length: Int
            let second: ClosedRange<UInt8>
            switch lead {
            case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
            case 0xE0: (length, second) = (3, 0xA0...0xBF)
            case 0xED: (length, second) = (3, 0x80...0x9F)
            case 0xE1...0xEF: (length, second) = (3, 0x80...0xBF)
            case 0xF0: (length, second) = (4, 0x90...0xBF)
            case 0xF4: (length, second) = (4, 0x80...0x8F)
            case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
            default:
                return false
            }
            guard index + length <= count, second.contains(base[index + 1]) else { return false }
            for offset in 2..<length where base[index + offset] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }
}
