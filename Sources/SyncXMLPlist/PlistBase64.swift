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
    /// For the fast path, four tables of 256 in one: entry `256 * i + byte` is the byte's value
    /// shifted to the place of the `i`th character of a group of four, or `1 << 24` when the
    /// byte is not in the alphabet.
    private static let groupTable: [UInt32] = {
        var table = [UInt32](repeating: 1 << 24, count: 1_024)
        for (value, byte) in alphabet.enumerated() {
            for place in 0..<4 { table[256 * place + Int(byte)] = UInt32(value) << (18 - 6 * place) }
        }
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

    /// Reads base64 text that arrives in pieces (as libxml2 reports a `<data>`
    /// element's text), writing the bytes as it goes: white space is skipped
    /// anywhere; a byte outside the alphabet, `=` other than as final padding, or
    /// a length that cannot come from whole bytes makes the text invalid.
    struct Reader {
        private var accumulator: UInt32 = 0
        /// Characters in `accumulator` (0–3) between whole groups of four.
        private var pending = 0
        private var paddingSeen = 0
        private var invalid = false

        /// A reader at the start of a text.
        init() {}

        /// Reads the next piece of text, appending the bytes it completes to `output`.
        mutating func read(_ text: UnsafeBufferPointer<UInt8>, into output: inout PlistTextBuffer) {
            guard !invalid, !text.isEmpty else { return }
            // Each 4 characters give at most 3 bytes, and `pending` characters wait from before.
            let room = (pending + text.count) / 4 * 3
            output.append(upTo: room + 1) { destination in
                decodeTable.withUnsafeBufferPointer { table in
                    groupTable.withUnsafeBufferPointer { groupTable in
                        read(text, table: table, groupTable: groupTable, into: destination)
                    }
                }
            }
        }

        /// Ends the text, appending its last bytes to `output`; `false` when it was not valid base64.
        mutating func finish(into output: inout PlistTextBuffer) -> Bool {
            guard !invalid else { return false }
            switch (pending, paddingSeen) {
            case (0, 0):
                return true
            case (2, 0), (2, 2):
                output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
                return true
            case (3, 0), (3, 1):
                output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
                output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
                return true
            default:
                return false
            }
        }

        /// Decodes `text` into `output` (room for `(pending + text.count) / 4 * 3 + 1` bytes),
        /// returning how many bytes it wrote.
        private mutating func read(
            _ text: UnsafeBufferPointer<UInt8>, table: UnsafeBufferPointer<UInt8>, groupTable: UnsafeBufferPointer<UInt32>,
            into output: UnsafeMutablePointer<UInt8>
        ) -> Int {
            // The state lives in locals while the loop runs, so that the compiler keeps it in registers.
            var accumulator = self.accumulator
            var pending = self.pending
            var paddingSeen = self.paddingSeen
            defer {
                self.accumulator = accumulator
                self.pending = pending
                self.paddingSeen = paddingSeen
            }
            var written = 0
            var index = 0
            let count = text.count
            while index < count {
                // Fast path: runs of four alphabet characters make three bytes each.
                if pending == 0, paddingSeen == 0 {
                    // Each table entry is a character's value already shifted to its place in the
                    // group's 24 bits, or a bit above them for any other byte: one OR and one
                    // comparison tell whether the four were all in the alphabet.
                    while index &+ 4 <= count {
                        let group =
                            groupTable[Int(text[index])] | groupTable[256 &+ Int(text[index &+ 1])]
                            | groupTable[512 &+ Int(text[index &+ 2])] | groupTable[768 &+ Int(text[index &+ 3])]
                        guard group < 1 << 24 else { break }
                        // Four bytes are stored, the group's three and one past them, which the next
                        // group overwrites; `output` has a byte of room to spare for the last one.
                        UnsafeMutableRawPointer(output + written).storeBytes(
                            of: (group << 8).bigEndian, as: UInt32.self)
                        written &+= 3
                        index &+= 4
                    }
                    guard index < count else { break }
                }
                // One character at a time: white space, padding, or a group split across pieces.
                let code = table[Int(text[index])]
                index &+= 1
                if code == whitespace {
                    // A line break and the next line's indentation, skipped in one go.
                    while index < count, table[Int(text[index])] == whitespace { index &+= 1 }
                } else if code < 64 {
                    guard paddingSeen == 0 else {
                        invalid = true
                        return written
                    }
                    accumulator = accumulator << 6 | UInt32(code)
                    pending &+= 1
                    if pending == 4 {
                        output[written] = UInt8(truncatingIfNeeded: accumulator >> 16)
                        output[written &+ 1] = UInt8(truncatingIfNeeded: accumulator >> 8)
                        output[written &+ 2] = UInt8(truncatingIfNeeded: accumulator)
                        written &+= 3
                        accumulator = 0
                        pending = 0
                    }
                } else if code == padding {
                    paddingSeen &+= 1
                } else {
                    invalid = true
                    return written
                }
            }
            return written
        }
    }
}
