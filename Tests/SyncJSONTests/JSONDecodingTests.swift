import Foundation
import SyncCore
import SyncJSON
import Testing

@Suite("JSON decoding: what each text becomes")
struct JSONDecodingTests {
    let codec = JSONCodec()

    @Test("numbers keep integers and reals apart", arguments: [
        ("1", SyncValue.integer(1)), ("-0", .integer(0)), ("0", .integer(0)), ("-1", .integer(-1)),
        ("1.0", .real(1)), ("1e2", .real(100)), ("1E2", .real(100)), ("1e+2", .real(100)), ("1e-2", .real(0.01)),
        ("-0.0", .real(-0.0)), ("0e0", .real(0)), ("-1.5E-3", .real(-0.0015)),
        ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
        ("9223372036854775808", .unsignedInteger(UInt64(Int64.max) + 1)),
        ("18446744073709551615", .unsignedInteger(.max)),
        ("1e400000000000000000000", nil), ("0.1", .real(0.1)), ("5e-324", .real(.leastNonzeroMagnitude)),
        ("1e-400", .real(0)), ("-1e-400", .real(-0.0)), ("1.7976931348623157e308", .real(.greatestFiniteMagnitude)),
        ("2.2250738585072011e-308", .real(Double.leastNormalMagnitude.nextDown)),
        ("9007199254740993.0", .real(9_007_199_254_740_992)), ("9007199254740995.0", .real(9_007_199_254_740_996)),
        ("123456789012345678901234567890e-10", .real(12_345_678_901_234_567_890.123_456_789_0)),
        ("0.000000000000000000000000000001", .real(1e-30)),
    ] as [(String, SyncValue?)])
    func numbers(text: String, expected: SyncValue?) throws {
        guard let expected else {
            #expect(throws: CodecError.self) { try codec.decode(Array(text.utf8)) }
            return
        }
        let decoded = try codec.decode(Array(text.utf8))
        #expect(CanonicalForm.exactlyEqual(decoded, expected), "\(text) decoded as \(decoded), expected \(expected)")
    }

    @Test("a string that looks like a date or like base64 stays a string")
    func datesAndDataAreStrings() throws {
        #expect(try codec.decode(Array(#""2024-05-01T12:30:00Z""#.utf8)) == "2024-05-01T12:30:00Z")
        #expect(try codec.decode(Array(#""AAEC/w==""#.utf8)) == "AAEC/w==")
        let date: SyncValue = .date(.init(timeIntervalSince1970: 1_714_566_600))
        #expect(try codec.decode(codec.encode(date)) == "2024-05-01T12:30:00Z")
        #expect(try codec.decode(codec.encode(.data([0, 1, 2, 255]))) == "AAEC/w==")
    }

    @Test("every escape decodes, surrogate pairs included", arguments: [
        (#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{8}\u{C}\n\r\t"),
        (#""\u0000\u001F\u007f\u00E9\u4e2d\uFFFF""#, "\u{0}\u{1F}\u{7F}é中\u{FFFF}"),
        (#""\uD83D\uDE00\ud834\udd1e\uDBFF\uDFFF""#, "😀𝄞\u{10FFFF}"),
        (#""a\u0062c""#, "abc"), (#""é\n中""#, "é\n中"), ("\"raw é 中 😀 \u{2028}\u{7F}\"", "raw é 中 😀 \u{2028}\u{7F}"),
    ])
    func escapes(text: String, expected: String) throws {
        #expect(try codec.decode(Array(text.utf8)) == .string(expected))
    }

    @Test("white space around and between tokens is allowed")
    func whitespace() throws {
        let text = " \t\r\n{ \"a\" :\n[ 1 ,\t2 ] , \"b\"\r\n: { } }\n\t "
        #expect(try codec.decode(Array(text.utf8)) == ["a": [1, 2], "b": [:]])
    }

    @Test("keys keep their exact text")
    func keys() throws {
        let decoded = try codec.decode(Array(#"{"":0,"\u0000":1,"Key":2,"key":3,"k\u00e9y":4}"#.utf8))
        #expect(decoded == ["": 0, "\u{0}": 1, "Key": 2, "key": 3, "kéy": 4])
    }

    @Test("keys are compared as Swift strings: canonically equivalent spellings are the same key")
    func canonicallyEquivalentKeys() throws {
        // U+00E9 and "e" + U+0301 are different JSON keys but one `String` key.
        let error = try #require(throws: CodecError.self) {
            try codec.decode(Array(#"{"\u00e9":1,"e\u0301":2}"#.utf8))
        }
        #expect(error.code == .malformedInput)
        #expect(error.message.contains("duplicate key"))
    }

    @Test("the element count limit counts every value")
    func elementCountLimit() throws {
        let limited = JSONCodec(limits: CodecLimits(maxElementCount: 4))
        #expect(try limited.decode(Array("[1,2,3]".utf8)) == [1, 2, 3])
        #expect(try limited.decode(Array(#"{"a":{"b":1}}"#.utf8)) == ["a": ["b": 1]])
        let error = try #require(throws: CodecError.self) { try limited.decode(Array("[1,[2],3]".utf8)) }
        #expect(error.code == .limitExceeded)
        #expect(error.offset == 7)
    }

    @Test("the input size limit is checked before parsing")
    func inputSizeLimit() throws {
        let limited = JSONCodec(limits: CodecLimits(maxInputBytes: 8))
        #expect(try limited.decode(Array("[1,2,3] ".utf8)) == [1, 2, 3])
        let error = try #require(throws: CodecError.self) { try limited.decode(Array("[1,2,3]  ".utf8)) }
        #expect(error.code == .limitExceeded)
    }

    @Test("nesting is read up to a raised limit")
    func raisedDepthLimit() throws {
        let depth = 1_000
        let permissive = JSONCodec(limits: CodecLimits(maxDepth: depth))
        let text = [UInt8](repeating: UInt8(ascii: "["), count: depth) + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
        var value = try permissive.decode(text)
        var levels = 0
        while case .array(let elements) = value, let first = elements.first {
            levels += 1
            value = first
        }
        #expect(levels == depth - 1)
        #expect(value == [])
    }
}
