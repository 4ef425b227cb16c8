import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import Testing

@Suite("JSON encoding: compact, sorted, exact")
struct JSONEncodingTests {
    let codec = JSONCodec()

    private func text(_ value: SyncValue) throws -> String {
        try JSONTestSupport.encodedText(value, codec: codec)
    }

    @Test("output is compact with keys sorted by their UTF-8 bytes")
    func compactAndSorted() throws {
        let value: SyncValue = ["b": [1, true, nil], "a": ["z": 1, "y": [:]], "B": "x", "é": 1, "😀": 2, "\u{FFFF}": 3, "": 0]
        #expect(try text(value) == #"{"":0,"B":"x","a":{"y":{},"z":1},"b":[1,true,null],"é":1,"\#u{FFFF}":3,"😀":2}"#)
    }

    @Test("equal values give equal bytes, whatever order the dictionary was built in")
    func deterministic() throws {
        var forward: [String: SyncValue] = [:]
        var backward: [String: SyncValue] = [:]
        let keys = (0..<200).map { "key\($0)" }
        for key in keys { forward[key] = .string(key) }
        for key in keys.reversed() { backward[key] = .string(key) }
        #expect(try codec.encode(.dictionary(forward)) == codec.encode(.dictionary(backward)))
    }

    @Test("strings escape only what JSON requires, plus U+2028 and U+2029")
    func stringEscapes() throws {
        #expect(try text("\"\\/\u{8}\u{C}\n\r\t") == #""\"\\/\b\f\n\r\t""#)
        #expect(try text("\u{0}\u{1}\u{1F}\u{7F}") == "\"\\u0000\\u0001\\u001f\u{7F}\"")
        #expect(try text("é中😀\u{FEFF}") == "\"é中😀\u{FEFF}\"")
        #expect(try text("a\u{2028}b\u{2029}c\u{2027}") == "\"a\\u2028b\\u2029c\u{2027}\"")
    }

    @Test("integers are written in decimal at every edge", arguments: [
        (SyncValue.integer(0), "0"), (.integer(-1), "-1"), (.integer(.max), "9223372036854775807"),
        (.integer(.min), "-9223372036854775808"), (.unsignedInteger(.max), "18446744073709551615"),
        (.integer(1_000_000), "1000000"),
    ])
    func integers(value: SyncValue, expected: String) throws {
        #expect(try text(value) == expected)
    }

    @Test("reals use the shortest text that reads back, and always look like reals", arguments: [
        (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (3.0, "3.0"), (0.1, "0.1"), (-2.5, "-2.5"), (100.0, "100.0"),
        (1e15, "1000000000000000.0"), (1e16, "1e+16"), (1e-5, "1e-05"), (1e-4, "0.0001"), (1e300, "1e+300"),
        (.leastNonzeroMagnitude, "5e-324"), (.greatestFiniteMagnitude, "1.7976931348623157e+308"),
        (0.1 + 0.2, "0.30000000000000004"), (123_456.789, "123456.789"), (9_007_199_254_740_992, "9007199254740992.0"),
        (-9_007_199_254_740_994, "-9007199254740994.0"), (9_100_000_000_000_000, "9100000000000000.0"),
        (9_999_999_999_999_998, "9999999999999998.0"), (1e16 - 2, "9999999999999998.0"), (1e16 + 2, "1.0000000000000002e+16"),
    ])
    func reals(real: Double, expected: String) throws {
        #expect(try text(.real(real)) == expected)
    }

    @Test("non-finite reals are refused", arguments: [Double.infinity, -.infinity, .nan, -.nan, .signalingNaN])
    func nonFiniteReals(real: Double) throws {
        let error = try #require(throws: CodecError.self) { try codec.encode(["x": [.real(real)]]) }
        #expect(error.code == .unsupportedValue)
        #expect(error.message.contains("non-finite"))
    }

    @Test("dates are ISO 8601 UTC strings, with a fraction only when there is one", arguments: [
        (0.0, "1970-01-01T00:00:00Z"), (1_714_566_600, "2024-05-01T12:30:00Z"), (1_714_566_600.5, "2024-05-01T12:30:00.5Z"),
        (1_714_566_600.25, "2024-05-01T12:30:00.25Z"), (1_714_566_600.000_001, "2024-05-01T12:30:00.000001Z"),
        (1_714_566_599.999_999_9, "2024-05-01T12:30:00Z"), (-1, "1969-12-31T23:59:59Z"), (-0.5, "1969-12-31T23:59:59.5Z"),
        (951_782_400, "2000-02-29T00:00:00Z"), (-2_208_988_800, "1900-01-01T00:00:00Z"),
        (-62_167_219_200, "0000-01-01T00:00:00Z"), (253_402_300_799, "9999-12-31T23:59:59Z"),
    ])
    func dates(seconds: Double, expected: String) throws {
        #expect(try text(.date(Date(timeIntervalSince1970: seconds))) == "\"\(expected)\"")
    }

    @Test("whole-second dates read back with Foundation's ISO 8601 parser")
    func datesReadByFoundation() throws {
        var generator = SeededGenerator(seed: 12)
        for _ in 0..<2_000 {
            let seconds = Double(Int64.random(in: -2_208_988_800...7_258_118_400, using: &generator))
            let date = Date(timeIntervalSince1970: seconds)
            guard case .string(let written) = try codec.decode(codec.encode(.date(date))) else {
                Issue.record("\(date) did not encode as a string")
                return
            }
            #expect(try Date(written, strategy: .iso8601) == date)
        }
    }

    @Test("dates outside the years 0000–9999 are refused", arguments: [
        -62_167_219_201.0, 253_402_300_800, 253_402_300_799.999_999_9, -1e15, 1e300,
    ])
    func datesOutOfRange(seconds: Double) throws {
        let error = try #require(throws: CodecError.self) { try codec.encode(.date(Date(timeIntervalSince1970: seconds))) }
        #expect(error.code == .unsupportedValue)
    }

    @Test("data is a padded standard base64 string, as Foundation writes it")
    func data() throws {
        #expect(try text(.data([])) == #""""#)
        #expect(try text(.data([0xFB, 0xFF])) == #""+/8=""#)
        var generator = SeededGenerator(seed: 13)
        for length in 0..<100 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(try text(.data(bytes)) == "\"\(Data(bytes).base64EncodedString())\"")
        }
    }

    @Test("the encoder refuses values nested deeper than the limit")
    func encoderDepth() throws {
        let codec = JSONCodec(limits: CodecLimits(maxDepth: 2))
        #expect(try codec.encode([["a": 1]]) == Array(#"[{"a":1}]"#.utf8))
        let error = try #require(throws: CodecError.self) { try codec.encode([[[1]]]) }
        #expect(error.code == .limitExceeded)
    }
}
