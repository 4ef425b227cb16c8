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
            let isContinuation = { (offset: Int) in base[index + offset] & 0xC0 == 0x80 }
            switch lead {
            case 0xC2...0xDF:
                guard index + 1 < count, isContinuation(1) else { return false }
                index += 2
            case 0xE0...0xEF:
                guard index + 2 < count else { return false }
                let second = base[index + 1]
                let lowest: UInt8 = lead == 0xE0 ? 0xA0 : 0x80
                let highest: UInt8 = lead == 0xED ? 0x9F : 0xBF
                guard second >= lowest, second <= highest, isContinuation(2) else { return false }
                index += 3
            case 0xF0...0xF4:
                guard index + 3 < count else { return false }
                let second = base[index + 1]
                let lowest: UInt8 = lead == 0xF0 ? 0x90 : 0x80
                let highest: UInt8 = lead == 0xF4 ? 0x8F : 0xBF
                guard second >= lowest, second <= highest, isContinuation(2), isContinuation(3) else { return false }
                index += 4
            default:
                return false
            }
        }
        return true
    }
}
