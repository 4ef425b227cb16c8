/// Strings made from bytes that must be valid UTF-8, as decoders read them.
package enum UTF8Validation {
    /// The string `bytes` spell, or `nil` when they are not valid UTF-8.
    ///
    /// Most text a decoder meets (keys, names, numbers as text) is ASCII, which is always valid
    /// UTF-8: it is turned into a string without the standard library's generic validation, which
    /// looks up type metadata on every call and was a tenth of a server's time spent reading records.
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var index = 0
        while index < bytes.count, bytes[index] < 0x80 { index += 1 }
        if index == bytes.count { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether `bytes` are valid UTF-8; ASCII is checked without the standard library's validation.
    package static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count, bytes[index] < 0x80 { index += 1 }
        if index == bytes.count { return true }
        var iterator = UnsafeBufferPointer(rebasing: bytes[index...]).makeIterator()
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
