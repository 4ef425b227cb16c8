/// Base64 without line breaks.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `bytes` as base64 text, padded with `=`.
    package static func encode(_ bytes: [UInt8]) -> String {
        var result: [UInt8] = []
        result.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            let b0 = Int(bytes[index]), b1 = count > 1 ? Int(bytes[index + 1]) : 0, b2 = count > 2 ? Int(bytes[index + 2]) : 0
            result.append(alphabet[b0 >> 2])
            result.append(alphabet[((b0 & 3) << 4) | (b1 >> 4)])
            result.append(count > 1 ? alphabet[((b1 & 15) << 2) | (b2 >> 6)] : UInt8(ascii: "="))
            result.append(count > 2 ? alphabet[b2 & 63] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The bytes of base64 text (whitespace ignored), or `nil` when it is not base64.
    package static func decode(_ text: some Sequence<UInt8>) -> [UInt8]? {
        var result: [UInt8] = []
        var bits = 0
        var count = 0
        for byte in text {
            if byte == 13 || byte == 10 || byte == 32 || byte == 9 { continue }
            if byte == UInt8(ascii: "=") { break }
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            bits = (bits << 6) | value
            count += 6
            if count >= 8 {
                count -= 8
                result.append(UInt8((bits >> count) & 0xFF))
                bits &= (1 << count) - 1
            }
        }
        return result
    }
}
