/// The ASCII bytes that JSON's grammar is made of.
enum JSONByte {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let lowercaseE = UInt8(ascii: "e")
    static let uppercaseE = UInt8(ascii: "E")
    static let lowercaseU = UInt8(ascii: "u")

    /// Whether `byte` is one of JSON's four white-space characters.
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == lineFeed || byte == carriageReturn || byte == tab
    }

    /// Whether `byte` is an ASCII decimal digit.
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte &- zero < 10
    }

    /// A byte as a person reads it in an error message: `'x'` for printable ASCII, `0xNN` otherwise.
    static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + hex2(byte)
    }

    /// Two uppercase hex digits.
    static func hex2(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }
}
