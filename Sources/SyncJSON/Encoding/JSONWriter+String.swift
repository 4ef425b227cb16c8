import SyncCore

extension JSONWriter {
    /// Appends a string in quotes, escaped per RFC 8259: `\"`, `\\`, the short
    /// escapes for backspace, form feed, newline, return and tab, `\u00xx` for
    /// the other control characters, and `\u2028` / `\u2029` (which JavaScript
    /// source cannot hold raw). Everything else is written as raw UTF-8.
    mutating func writeString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in writeString(utf8: utf8) }
    }

    /// Appends the string whose UTF-8 bytes are `utf8` (which must be valid), as ``writeString(_:)`` does.
    mutating func writeString(utf8: UnsafeBufferPointer<UInt8>) {
        output.append(JSONByte.quote)
        var runStart = 0
        var position = 0
        while position < utf8.count {
            let byte = utf8[position]
            if byte >= 0x20 && byte != JSONByte.quote && byte != JSONByte.backslash && byte != 0xE2 {
                position += 1
                continue
            }
            if byte == 0xE2 {
                // U+2028 is E2 80 A8, U+2029 is E2 80 A9.
                guard position + 2 < utf8.count, utf8[position + 1] == 0x80,
                    utf8[position + 2] == 0xA8 || utf8[position + 2] == 0xA9
                else {
                    position += 1
                    continue
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
                appendASCII(utf8[position + 2] == 0xA8 ? "\\u2028" : "\\u2029")
                position += 3
                runStart = position
                continue
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
            appendEscape(for: byte)
            position += 1
            runStart = position
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        output.append(JSONByte.quote)
    }

    /// Appends the escape of a quote, a backslash or a control character.
    private mutating func appendEscape(for byte: UInt8) {
        switch byte {
        case JSONByte.quote: appendASCII("\\\"")
        case JSONByte.backslash: appendASCII("\\\\")
        case 0x08: appendASCII("\\b")
        case 0x0C: appendASCII("\\f")
        case 0x0A: appendASCII("\\n")
        case 0x0D: appendASCII("\\r")
        case 0x09: appendASCII("\\t")
        default:
            let hexDigits: StaticString = "0123456789abcdef"
            appendASCII("\\u00")
            output.append(hexDigits.utf8Start[Int(byte >> 4)])
            output.append(hexDigits.utf8Start[Int(byte & 0xF)])
        }
    }
}
