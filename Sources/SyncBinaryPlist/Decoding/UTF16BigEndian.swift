/// Turns UTF-16BE bytes into a `String`, refusing unpaired surrogates.
enum UTF16BigEndian {
    /// The string the UTF-16BE code units in `bytes` spell, or `nil` when
    /// they hold an unpaired surrogate. `bytes.count` is even.
    static func string(from bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let unitCount = bytes.count / 2
        if unitCount == 0 { return "" }
        var valid = true
        // A code unit becomes at most three UTF-8 bytes (a pair of two becomes four).
        let string = String(unsafeUninitializedCapacity: unitCount * 3) { output in
            var written = 0
            var index = 0
            while index < unitCount {
                let unit = UInt32(bytes[2 * index]) << 8 | UInt32(bytes[2 * index + 1])
                index += 1
                var scalar = unit
                if unit & 0xF800 == 0xD800 {
                    guard unit < 0xDC00, index < unitCount else {
                        valid = false
                        return 0
                    }
                    let low = UInt32(bytes[2 * index]) << 8 | UInt32(bytes[2 * index + 1])
                    guard low & 0xFC00 == 0xDC00 else {
                        valid = false
                        return 0
                    }
                    index += 1
                    scalar = 0x1_0000 + ((unit & 0x3FF) << 10 | (low & 0x3FF))
                }
                written += encodeUTF8(scalar, into: output, at: written)
            }
            return written
        }
        return valid ? string : nil
    }

    /// Writes `scalar` (a valid Unicode scalar value) as UTF-8 at `position`; returns the bytes written.
    private static func encodeUTF8(_ scalar: UInt32, into output: UnsafeMutableBufferPointer<UInt8>, at position: Int) -> Int {
        switch scalar {
        case 0..<0x80:
            output[position] = UInt8(scalar)
            return 1
        case 0x80..<0x800:
            output[position] = UInt8(0xC0 | scalar >> 6)
            output[position + 1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case 0x800..<0x1_0000:
            output[position] = UInt8(0xE0 | scalar >> 12)
            output[position + 1] = UInt8(0x80 | (scalar >> 6) & 0x3F)
            output[position + 2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            output[position] = UInt8(0xF0 | scalar >> 18)
            output[position + 1] = UInt8(0x80 | (scalar >> 12) & 0x3F)
            output[position + 2] = UInt8(0x80 | (scalar >> 6) & 0x3F)
            output[position + 3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }
}
