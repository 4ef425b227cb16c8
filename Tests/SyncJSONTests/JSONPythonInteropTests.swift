import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

@Suite(
    "JSON interop with Python's json module",
    .enabled("python3 is not installed: the JSON interop tests need it") { await PythonJSON.python.isAvailable() })
struct JSONPythonInteropTests {
    let codec = JSONCodec()

    /// Values written by us, to be read by Python; dates and data arrive as the strings Foundation writes for them.
    static let writtenCorpus: [SyncValue] = [
        JSONTestSupport.nestedSample,
        .null, true, false, 0, -1, .integer(.max), .integer(.min), .unsignedInteger(UInt64(Int64.max) + 1),
        .unsignedInteger(.max),
        0.0, .real(-0.0), 1.0, -2.5, 0.1, 1e15, 1e16, 1e-5, 1e-7, 1e22, 1e23, 123_456.789, .real(.pi),
        .real(.leastNonzeroMagnitude), .real(-.leastNonzeroMagnitude), .real(.leastNormalMagnitude),
        .real(Double.leastNormalMagnitude.nextDown), .real(.greatestFiniteMagnitude), .real(-.greatestFiniteMagnitude),
        .real(Double(1 << 53).nextUp), .real(0.1 + 0.2),
        "", "plain", "quote \" backslash \\ slash /", "\u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F}\u{7F}",
        "é ß 中文 😀 𝄞 \u{10FFFF} \u{FFFF} \u{FEFF}", "line\u{2028}separator\u{2029}paragraph",
        "2024-05-01T12:30:00Z", "AAEC/w==",
        .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: 1_714_566_600)),
        .date(Date(timeIntervalSince1970: -2_208_988_800)), .date(Date(timeIntervalSince1970: 253_402_300_799)),
        .data([]), .data([0]), .data([0, 1]), .data([0, 1, 2]), .data(Array(0...255)),
        [], [:], [[[[]]]], ["": ""], ["b": 1, "a": 2, "é": 3, "e": 4, "😀": 5, "\u{FFFF}": 6, "Z": 7],
        ["nested": ["deeper": ["deepest": [1, 2.0, "3", nil, true]]]],
    ]

    /// JSON texts as other writers produce them: white space, escapes in every
    /// form, exponents, the extremes of each number kind.
    static let readCorpus: [String] = [
        "null", "true", "false", "0", "-0", "-0.0", "0.0", "1", "-1", "1.0", "1e2", "1E2", "1e+2", "1e-2", "-1.5E-3",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551615",
        "0.1", "0.30000000000000004", "1.7976931348623157e308", "4.9e-324", "5e-324", "2.2250738585072011e-308",
        "2.2250738585072012e-308", "2.225073858507201e-308", "1e-400", "-1e-400", "9007199254740993", "9007199254740993.0",
        "3.141592653589793238462643383279502884197169399375105820974944", "123456789012345678901234567890e-10",
        "0.000000000000000000000000000000000000000000001", "100000000000000000000000000000000000000000000.0",
        "1e22", "1e23", "8.98846567431158e307", "2.4703282292062328e-324",
        #""""#, #""\"\\\/\b\f\n\r\t""#, #""\u0000\u001f\u007f\u0080\u00e9\u4E2D\uFFFF""#,
        #""\ud83d\ude00 \uD834\uDD1E \udbff\udfff""#, #""raw é 中 😀 \u2028""#, "\"\u{2028}\u{2029}\u{7F}\"",
        " \t\r\n[ 1 , 2 ,\n\t3 ] \n", "{ \"a\" : { \"b\" : [ ] , \"c\" : { } } }",
        #"{"key":"value","Key":"VALUE","k\u00e9y":"v","ke\u0301z":"w"}"#,
        #"{"":0,"\u0000":1," ":2}"#, "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]",
        #"{"a":[1,2.5,-0,1E2,1e-2,true,false,null,"s",{"n":{}}],"b":-9223372036854775808}"#,
        #"{"date":"2024-05-01T12:30:00Z","data":"AAEC/w=="}"#,
    ]

    @Test("the Python check notices a value, a kind or a real's sign that differs")
    func checkNoticesDisagreement() async throws {
        let pairs = try [(SyncValue.integer(1), SyncValue.integer(2)), (1, 1.0), (.real(0.0), .real(-0.0)), ("é", "e")]
            .map { (text: try codec.encode($0.0), canonical: try codec.encode(CanonicalForm.of($0.1))) }
        let report = try await PythonJSON.check(pairs)
        #expect(report.agreed == 0)
        #expect(report.disagreements.count == pairs.count)
    }

    @Test("Python reads the fixed corpus we write as the same values")
    func pythonReadsOurCorpus() async throws {
        let pairs = try Self.writtenCorpus.map { value in
            (text: try codec.encode(value), canonical: try codec.encode(CanonicalForm.of(value)))
        }
        let report = try await PythonJSON.check(pairs)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.joined(separator: "\n"))")
        #expect(report.agreed == pairs.count)
    }

    @Test("Python reads 10,000 random values we write as the same values", arguments: [UInt64(3), 20_240_502])
    func pythonReadsOurRandomValues(seed: UInt64) async throws {
        var values = RandomValues(seed: seed, features: codec.features)
        var pairs: [(text: [UInt8], canonical: [UInt8])] = []
        for _ in 0..<10_000 {
            let value = values.next()
            pairs.append((try codec.encode(value), try codec.encode(CanonicalForm.of(value))))
        }
        let report = try await PythonJSON.check(pairs)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.prefix(10).joined(separator: "\n"))")
        #expect(report.agreed == pairs.count)
    }

    @Test("our bytes are exactly what json.dumps writes with sorted keys and compact separators")
    func sameBytesAsPython() async throws {
        var values = RandomValues(seed: 8, features: codec.features)
        let texts = try (Self.writtenCorpus + (0..<5_000).map { _ in values.next() }).map { try codec.encode($0) }
        let report = try await PythonJSON.checkSameBytes(texts)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.prefix(10).joined(separator: "\n"))")
        #expect(report.agreed == texts.count)
    }

    @Test("we read the fixed corpus as Python reads it")
    func weReadTheCorpus() async throws {
        try await expectAgreement(on: Self.readCorpus.map { Array($0.utf8) })
    }

    @Test("we read 10,000 random texts written by Python's json.dumps as Python reads them", arguments: [UInt64(5), 77])
    func weReadPythonRandomValues(seed: UInt64) async throws {
        let texts = try await PythonJSON.generate(seed: seed, count: 10_000)
        #expect(texts.count == 10_000)
        try await expectAgreement(on: texts)
    }

    /// Decodes each text with our codec and has Python check two things: that
    /// it reads the text itself as the value we read, and that it reads our
    /// re-encoding of that value as the same value again.
    private func expectAgreement(on texts: [[UInt8]]) async throws {
        var pairs: [(text: [UInt8], canonical: [UInt8])] = []
        for text in texts {
            let value: SyncValue
            do { value = try codec.decode(text) } catch {
                Issue.record("we refused \(String(decoding: text.prefix(200), as: UTF8.self)): \(error)")
                continue
            }
            let canonical = try codec.encode(CanonicalForm.of(value))
            pairs.append((text, canonical))
            pairs.append((try codec.encode(value), canonical))
        }
        let report = try await PythonJSON.check(pairs)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.prefix(10).joined(separator: "\n"))")
        #expect(report.agreed == pairs.count)
    }
}
