import SyncCore
import SyncJSON
import SyncTesting
import Testing

/// One kind of bad input, the bytes that show it, and the error code it must get.
struct MalformedCase: CustomTestStringConvertible, Sendable {
    var name: String
    var bytes: [UInt8]
    var code: CodecError.Code
    var testDescription: String { name }

    init(_ name: String, _ text: String, _ code: CodecError.Code = .malformedInput) {
        self.init(name, Array(text.utf8), code)
    }

    init(_ name: String, _ bytes: [UInt8], _ code: CodecError.Code = .malformedInput) {
        self.name = name
        self.bytes = bytes
        self.code = code
    }

    /// `prefix`, then `middle`, then `suffix`, as bytes.
    static func bytes(_ prefix: String, _ middle: [UInt8], _ suffix: String) -> [UInt8] {
        Array(prefix.utf8) + middle + Array(suffix.utf8)
    }
}

@Suite("JSON decoding refuses malformed input with a clear error")
struct JSONMalformedInputTests {
    let codec = JSONCodec()

    static let invalidUTF8Cases: [MalformedCase] = [
        .init("overlong two-byte '/'", MalformedCase.bytes("\"", [0xC0, 0xAF], "\"")),
        .init("overlong two-byte NUL", MalformedCase.bytes("\"", [0xC1, 0x80], "\"")),
        .init("overlong three-byte", MalformedCase.bytes("\"", [0xE0, 0x80, 0xAF], "\"")),
        .init("overlong four-byte", MalformedCase.bytes("\"", [0xF0, 0x80, 0x80, 0xAF], "\"")),
        .init("encoded high surrogate", MalformedCase.bytes("\"", [0xED, 0xA0, 0x80], "\"")),
        .init("encoded low surrogate", MalformedCase.bytes("\"", [0xED, 0xBF, 0xBF], "\"")),
        .init("above U+10FFFF", MalformedCase.bytes("\"", [0xF4, 0x90, 0x80, 0x80], "\"")),
        .init("lead byte 0xF5", MalformedCase.bytes("\"", [0xF5, 0x80, 0x80, 0x80], "\"")),
        .init("byte 0xFF", MalformedCase.bytes("\"", [0xFF], "\"")),
        .init("lone continuation byte", MalformedCase.bytes("\"a", [0x80], "b\"")),
        .init("sequence cut short by a quote", MalformedCase.bytes("\"", [0xE4, 0xB8], "\"")),
        .init("sequence cut short by ASCII", MalformedCase.bytes("\"", [0xC3], "a\"")),
        .init("sequence cut short by the end", MalformedCase.bytes("\"", [0xF0, 0x9F, 0x98], "")),
        .init("invalid UTF-8 in a key", MalformedCase.bytes("{\"", [0xC0, 0x80], "\":1}")),
        .init("non-ASCII byte outside a string", MalformedCase.bytes("[", [0xC3, 0xA9], "]")),
    ]

    static let badStringsCases: [MalformedCase] = [
        .init("lone high surrogate at the end", #""\uD83D""#),
        .init("high surrogate then a letter", #""\uD83Dx""#),
        .init("high surrogate then another escape", #""\uD83D\n""#),
        .init("two high surrogates", #""\uD83D\uD83D""#),
        .init("lone low surrogate", #""\uDE00""#),
        .init("low then high surrogate", #""\uDE00\uD83D""#),
        .init("unknown escape", #""\x41""#),
        .init("uppercase U escape", #""\U0041""#),
        .init("bad hex digit", #""\u12G4""#),
        .init("short unicode escape", #""\u12""#),
        .init("raw NUL", "\"a\u{0}b\""),
        .init("raw newline", "\"a\nb\""),
        .init("raw tab", "\"a\tb\""),
        .init("raw U+001F", "\"\u{1F}\""),
        .init("unterminated string", #""abc"#),
        .init("single quotes", "'abc'"),
    ]

    static let badNumbersCases: [MalformedCase] = [
        .init("leading zero", "01"), .init("negative leading zero", "-01"), .init("plus sign", "+1"),
        .init("no integer part", ".5"), .init("no fraction digits", "1."), .init("no exponent digits", "1e"),
        .init("signed exponent without digits", "1e+"), .init("a lone minus", "-"), .init("two minus signs", "--1"),
        .init("hexadecimal", "0x10"), .init("NaN", "NaN"), .init("Infinity", "Infinity"),
        .init("minus Infinity", "-Infinity"), .init("exponent then dot", "1e5.0"),
        .init("integer above UInt64.max", "18446744073709551616", .limitExceeded),
        .init("integer below Int64.min", "-9223372036854775809", .limitExceeded),
        .init("huge integer", "123456789012345678901234567890", .limitExceeded),
        .init("real overflowing to infinity", "1.5e400", .limitExceeded),
        .init("negative real overflowing", "-1e309", .limitExceeded),
        .init("huge exponent", "1e99999999999999999999999", .limitExceeded),
    ]

    static let badStructureCases: [MalformedCase] = [
        .init("empty input", ""), .init("only white space", " \n\t "), .init("trailing comma in array", "[1,]"),
        .init("trailing comma in object", #"{"a":1,}"#), .init("missing comma", "[1 2]"),
        .init("missing colon", #"{"a" 1}"#), .init("unquoted key", "{a:1}"), .init("number key", "{1:2}"),
        .init("missing value", #"{"a":}"#), .init("unclosed array", "[1,2"), .init("unclosed object", #"{"a":1"#),
        .init("mismatched brackets", "[1}"), .init("line comment", "// c\n1"), .init("block comment", "[1/*c*/]"),
        .init("misspelt literal", "nul"), .init("capitalised literal", "True"), .init("vertical tab", "\u{B}1"),
        .init("non-breaking space", "\u{A0}1"), .init("leading comma", "[,1]"),
    ]

    static let trailingGarbageCases: [MalformedCase] = [
        .init("two values", "1 2"), .init("object then letter", "{}x"), .init("extra bracket", "[]]"),
        .init("literal run-on", "nulll"), .init("literal then letter", "truex"), .init("number then letter", "12a"),
        .init("string then string", #""a""b""#), .init("value then NUL", "1\u{0}"),
    ]

    static let duplicateKeysCases: [MalformedCase] = [
        .init("same key twice", #"{"a":1,"a":2}"#), .init("same key, same value", #"{"a":1,"a":1}"#),
        .init("same key, escaped", #"{"a":1,"\u0061":2}"#), .init("duplicate nested", #"[{"x":{"k":1,"k":[]}}]"#),
        .init("empty key twice", #"{"":1,"":2}"#),
    ]

    @Test("invalid UTF-8 is refused", arguments: invalidUTF8Cases)
    func invalidUTF8(_ bad: MalformedCase) throws { try expectRejected(bad) }

    @Test("bad strings and escapes are refused", arguments: badStringsCases)
    func badStrings(_ bad: MalformedCase) throws { try expectRejected(bad) }

    @Test("numbers outside the grammar or the range are refused", arguments: badNumbersCases)
    func badNumbers(_ bad: MalformedCase) throws { try expectRejected(bad) }

    @Test("broken structure is refused", arguments: badStructureCases)
    func badStructure(_ bad: MalformedCase) throws { try expectRejected(bad) }

    @Test("anything after the value is refused", arguments: trailingGarbageCases)
    func trailingGarbage(_ bad: MalformedCase) throws { try expectRejected(bad) }

    @Test("duplicate keys are refused", arguments: duplicateKeysCases)
    func duplicateKeys(_ bad: MalformedCase) throws { try expectRejected(bad) }

    @Test("a byte order mark is refused, with the reason")
    func byteOrderMark() throws {
        let error = try #require(throws: CodecError.self) { try codec.decode([0xEF, 0xBB, 0xBF] + Array("{}".utf8)) }
        #expect(error.code == .malformedInput)
        #expect(error.offset == 0)
        #expect(error.message.contains("byte order mark"))
    }

    @Test("errors say what and where")
    func messagesAndOffsets() throws {
        let duplicate = try #require(throws: CodecError.self) { try codec.decode(Array(#"{"a":1, "a":2}"#.utf8)) }
        #expect(duplicate.offset == 8)
        #expect(duplicate.message.contains(#"duplicate key "a""#))

        let utf8 = try #require(throws: CodecError.self) { try codec.decode(MalformedCase.bytes("[\"ab", [0xED, 0xA0, 0x80], "\"]")) }
        #expect(utf8.offset == 4)
        #expect(utf8.message.contains("invalid UTF-8"))

        let range = try #require(throws: CodecError.self) { try codec.decode(Array("[1, 18446744073709551616]".utf8)) }
        #expect(range.offset == 4)
        #expect(range.message.contains("out of range"))

        let surrogate = try #require(throws: CodecError.self) { try codec.decode(Array(#"["x\uDE00"]"#.utf8)) }
        #expect(surrogate.offset == 3)
        #expect(surrogate.message.contains("lone surrogate"))

        let control = try #require(throws: CodecError.self) { try codec.decode(Array("\"a\nb\"".utf8)) }
        #expect(control.offset == 2)
        #expect(control.message.contains("control character U+000A"))

        let trailing = try #require(throws: CodecError.self) { try codec.decode(Array("{} x".utf8)) }
        #expect(trailing.offset == 3)
        #expect(trailing.message.contains("after the JSON value"))

        let truncated = try #require(throws: CodecError.self) { try codec.decode(Array("[1,".utf8)) }
        #expect(truncated.offset == 3)
        #expect(truncated.message.contains("unexpected end of input"))
    }

    @Test("nesting beyond the limit is refused at the bracket that goes too deep")
    func nestingBeyondLimit() throws {
        let codec = JSONCodec(limits: CodecLimits(maxDepth: 3))
        #expect(try codec.decode(Array("[[[]]]".utf8)) == [[[]]])
        let error = try #require(throws: CodecError.self) { try codec.decode(Array(#"[{"a":[[]]}]"#.utf8)) }
        #expect(error.code == .limitExceeded)
        #expect(error.offset == 7)
        #expect(error.message.contains("nesting deeper than 3"))
        let defaultLimit = [UInt8](repeating: UInt8(ascii: "["), count: 10_000)
        #expect(throws: CodecError.self) { try JSONCodec().decode(defaultLimit) }
    }

    @Test("every prefix of a sample is refused as malformed, at an offset inside the input")
    func everyTruncation() throws {
        for sample in [JSONTestSupport.nestedSample, ["s": "é中😀\u{2028}\\\"", "r": -12.5e-7, "u": .unsignedInteger(.max)]] {
            let bytes = try codec.encode(sample)
            for length in 0..<bytes.count {
                let prefix = Array(bytes[..<length])
                let error = try #require(throws: CodecError.self) { try codec.decode(prefix) }
                #expect(error.code == .malformedInput)
                #expect((error.offset ?? -1) >= 0 && (error.offset ?? .max) <= length)
            }
        }
    }

    @Test("the verifier's garbage and corruption run never crashes")
    func garbage() throws {
        let verifier = CodecVerifier(codec: codec)
        let rejected = try verifier.verifyGarbageHandled(count: 50_000, seed: 11, sample: JSONTestSupport.nestedSample)
        #expect(rejected > 40_000)
    }

    private func expectRejected(_ bad: MalformedCase) throws {
        let error = try #require(throws: CodecError.self) { try codec.decode(bad.bytes) }
        #expect(error.code == bad.code, "\(bad.name): \(error)")
        #expect(!error.message.isEmpty)
        if let offset = error.offset { #expect(offset >= 0 && offset <= bad.bytes.count) }
        try CodecVerifier(codec: codec).verifyRejected(bad.bytes, with: bad.code)
    }
}
