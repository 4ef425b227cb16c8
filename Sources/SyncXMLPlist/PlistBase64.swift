import SyncCore

/// Base64 (RFC 4648) for `<data>`: wrapped, indented output and a reader that
/// skips XML white space.
enum PlistBase64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0–63 for an alphabet byte, `whitespace` for XML white space, `padding` for `=`, else `invalid`.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        for byte in [0x20, 0x09, 0x0A, 0x0D] as [UInt8] { table[Int(byte)] = whitespace }
        table[Int(UInt8(ascii: "="))] = padding
        return table
    }()
    private static let invalid: UInt8 = 0xFF
    private static let whitespace: UInt8 = 0xFE
    private static let padding: UInt8 = 0xFD

    /// Characters of base64 per line, as Apple and Python write them.
    static let lineLength = 76

    /// The size of what ``appendLines(of:indent:to:)`` appends for `count` bytes.
    static func linesSize(of count: Int, indent: Int) -> Int {
        let characters = (count + 2) / 3 * 4
        let lines = (characters + lineLength - 1) / lineLength
        return characters + lines * (indent + 1)
    }

    /// Appends the base64 of `bytes`, one line per ``lineLength`` characters, each
    /// line preceded by `indent` tabs and followed by a newline.
    static func appendLines(of bytes: [UInt8], indent: Int, to out: inout ByteOutput) {
        guard !bytes.isEmpty else { return }
        out.reserve(linesSize(of: bytes.count, indent: indent))
        let bytesPerLine = lineLength / 4 * 3
        bytes.withUnsafeBufferPointer { input in
            var index = 0
            while index < input.count {
                for _ in 0..<indent { out.appendUnchecked(0x09) }
                let lineEnd = Swift.min(index + bytesPerLine, input.count)
                out.appendBase64(UnsafeBufferPointer(rebasing: input[index..<lineEnd]))
                out.appendUnchecked(0x0A)
                index = lineEnd
            }
        }
    }

    /// The bytes `text` encodes, ignoring white space anywhere; `nil` for a byte
    /// outside the alphabet, `=` other than as final padding, or a length that
    /// cannot come from whole bytes.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3)
        var accumulator: UInt32 = 0
        var pending = 0
        var paddingSeen = 0
        decodeTable.withUnsafeBufferPointer { table in
            for byte in text {
                let code = table[Int(byte)]
                if code < 64 {
                    guard paddingSeen == 0 else { pending = -1; return }
                    accumulator = accumulator << 6 | UInt32(code)
                    pending += 1
                    if pending == 4 {
                        output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                        output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                        output.append(UInt8(truncatingIfNeeded: accumulator))
                        accumulator = 0
                        pending = 0
                    }
                } else if code == padding {
                    paddingSeen += 1
                } else if code != whitespace {
                    pending = -1
                    return
                }
            }
        }
        switch (pending, paddingSeen) {
        case (0, 0): return output
        case (2, 0), (2, 2):
            output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
            return output
        case (3, 0), (3, 1):
            output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
            return output
        default: return nil
        }
    }
}
