/// Lowercase hexadecimal text for bytes, the way test programs pass bytes
/// through a line of text. Works on bytes, not `String`s, so that megabytes
/// of it stay quick in a debug build.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        append(bytes, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the lowercase hex of `bytes` to `text`.
    public static func append(_ bytes: [UInt8], to text: inout [UInt8]) {
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
    }

    /// The bytes of hex text (either case).
    /// - Throws: ``HexError`` for an odd length or a character that is not a hex digit.
    public static func decode(_ text: Substring) throws(HexError) -> [UInt8] {
        try decode(ArraySlice(text.utf8))
    }

    /// The bytes of hex text given as its UTF-8 bytes (either case).
    /// - Throws: ``HexError`` for an odd length or a character that is not a hex digit.
    public static func decode(_ digits: ArraySlice<UInt8>) throws(HexError) -> [UInt8] {
        guard digits.count % 2 == 0 else { throw HexError(digits, reason: "odd length") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = value(of: digits[index]), let low = value(of: digits[index + 1]) else {
                throw HexError(digits, reason: "not a hex digit at \(index - digits.startIndex)")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Text that is not hex.
public struct HexError: Error, CustomStringConvertible {
    /// The start of the text.
    public var text: String
    /// What is wrong with it.
    public var reason: String

    init(_ digits: ArraySlice<UInt8>, reason: String) {
        self.text = String(decoding: digits.prefix(80), as: UTF8.self)
        self.reason = reason
    }

    /// `not hex (reason): text`.
    public var description: String { "not hex (\(reason)): \(text)" }
}
