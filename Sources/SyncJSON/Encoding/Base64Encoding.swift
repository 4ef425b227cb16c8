/// Standard base64 (RFC 4648 §4, `+` and `/`, with `=` padding), written straight into a byte buffer.
enum Base64Encoding {
    private static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// Appends the base64 text of `data`.
    static func append(_ data: [UInt8], to bytes: inout [UInt8]) {
        let symbols = alphabet.utf8Start
        let fullGroups = data.count / 3
        data.withUnsafeBufferPointer { input in
            var position = 0
            for _ in 0..<fullGroups {
                let group = UInt32(input[position]) << 16 | UInt32(input[position + 1]) << 8 | UInt32(input[position + 2])
                bytes.append(symbols[Int(group >> 18)])
                bytes.append(symbols[Int(group >> 12 & 0x3F)])
                bytes.append(symbols[Int(group >> 6 & 0x3F)])
                bytes.append(symbols[Int(group & 0x3F)])
                position += 3
            }
            switch input.count - position {
            case 1:
                let group = UInt32(input[position]) << 16
                bytes.append(symbols[Int(group >> 18)])
                bytes.append(symbols[Int(group >> 12 & 0x3F)])
                bytes.append(UInt8(ascii: "="))
                bytes.append(UInt8(ascii: "="))
            case 2:
                let group = UInt32(input[position]) << 16 | UInt32(input[position + 1]) << 8
                bytes.append(symbols[Int(group >> 18)])
                bytes.append(symbols[Int(group >> 12 & 0x3F)])
                bytes.append(symbols[Int(group >> 6 & 0x3F)])
                bytes.append(UInt8(ascii: "="))
            default:
                break
            }
        }
    }
}
