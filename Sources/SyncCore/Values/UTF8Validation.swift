/// Strings made from bytes that must be valid UTF-8, as decoders read them.
package enum UTF8Validation {
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
    @inline(__always)
    package static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        let asciiEnd = asciiPrefix(bytes)
        if asciiEnd == bytes.count { return true }
        return isValidAfterASCII(UnsafeBufferPointer(rebasing: bytes[asciiEnd...])) ? false : nil
    }

    /// The length of the run of ASCII bytes `bytes` start with.
    @inline(__always)
    static func asciiPrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 <= bytes.count,
            raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
        {
            index += 8
        }
        while index < bytes.count, base[index] < 0x80 { index += 1 }
        return index
    }

    /// Whether `bytes`, which start with a non-ASCII byte, are valid UTF-8.
    static func isValidAfterASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
