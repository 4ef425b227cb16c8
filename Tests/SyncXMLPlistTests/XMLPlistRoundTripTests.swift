import Foundation
import SyncCore
import SyncTesting
import SyncXMLPlist
import Testing

@Suite("XML property list round trips and the codec verifier")
struct XMLPlistRoundTripTests {
    let codec = XMLPlistCodec()
    var verifier: CodecVerifier { CodecVerifier(codec: codec) }

    @Test("the nested sample and each kind at its extremes survive a round trip")
    func fixedValues() throws {
        let values: [SyncValue] = [
            XMLPlistTestSupport.nestedSample,
            "", " ", "  leading and trailing  ", "\n", "\r\n", "a\rb", "<![CDATA[x]]>", "]]>", "&amp; &#38; &lt;",
            "é ß 中文 😀 𝄞 \u{10FFFF} \u{FFFD} \u{FEFF} \u{7F} \u{2028}", .string(String(repeating: "ab", count: 5_000)),
            0, -1, 1, .integer(.max), .integer(.min), .unsignedInteger(UInt64(Int64.max) + 1), .unsignedInteger(.max),
            0.0, 1.0, -2.5, 0.1, 1e16, 1e-7, 1e300, .real(.pi), .real(.leastNonzeroMagnitude), .real(.leastNormalMagnitude),
            .real(.greatestFiniteMagnitude), .real(-.greatestFiniteMagnitude), .real(.infinity), .real(-.infinity),
            true, false,
            .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: -62_167_219_200)),
            .date(Date(timeIntervalSince1970: 253_402_300_799)), .date(Date(timeIntervalSince1970: 951_782_400)),
            .data([]), .data([0]), .data([0, 1]), .data([0, 1, 2]), .data(Array(repeating: 0xAB, count: 1_000)),
            [], [:], [[[[]]]], [[:]], ["": [:]], ["b": 1, "a": 2, "é": 3, "e": 4, "😀": 5, "Z": 6, "&<>": 7],
        ]
        try verifier.verifyRoundTrip(values)
    }

    @Test("-0.0 keeps its sign and NaN stays NaN")
    func signedZeroAndNaN() throws {
        let zero = try codec.decode(codec.encode(.real(-0.0)))
        #expect(zero.realValue?.sign == .minus)
        let nan = try codec.decode(codec.encode(.real(.nan)))
        #expect(nan.realValue?.isNaN == true)
    }

    @Test(
        "10,000 random values either round-trip or are refused for a character XML cannot carry",
        arguments: [UInt64(1), 2_024_050_1])
    func randomValues(seed: UInt64) throws {
        var values = RandomValues(seed: seed, features: codec.features)
        var refused = 0
        for index in 0..<10_000 {
            let value = values.next()
            if XMLPlistTestSupport.holdsNonXMLCharacter(value) {
                let error = XMLPlistTestSupport.encodingError(value)
                #expect(error?.code == .unsupportedValue, "value #\(index) \(value) gave \(String(describing: error))")
                refused += 1
            }
            let safe = XMLPlistTestSupport.xmlSafe(value)
            do { try verifier.verifyRoundTrip([safe]) } catch {
                Issue.record("seed \(seed), value #\(index): \(error)")
            }
        }
        // RandomValues puts C0 controls in strings now and then; both paths must be exercised.
        #expect(refused > 100)
        #expect(refused < 9_000)
    }

    @Test("random dictionaries (the shape of every message) round-trip", arguments: [UInt64(5)])
    func randomDictionaries(seed: UInt64) throws {
        var values = RandomValues(seed: seed, features: codec.features, maxDepth: 6, maxContainerCount: 10)
        for _ in 0..<2_000 {
            try verifier.verifyRoundTrip([XMLPlistTestSupport.xmlSafe(values.nextDictionary())])
        }
    }

    @Test("every strict prefix of an encoding is rejected")
    func truncations() throws {
        try verifier.verifyTruncationsRejected(of: XMLPlistTestSupport.nestedSample)
        for value: SyncValue in ["x", 1, 2.5, true, .data([1, 2, 3]), [], [:], ["k": ["v"]]] {
            try verifier.verifyTruncationsRejected(of: value)
        }
    }

    @Test("random bytes and corrupted encodings never crash the decoder", arguments: [UInt64(11), 12])
    func garbage(seed: UInt64) throws {
        let rejected = try verifier.verifyGarbageHandled(count: 5_000, seed: seed, sample: XMLPlistTestSupport.nestedSample)
        #expect(rejected > 2_500)
    }

    @Test("nesting deeper than the limit is refused by the encoder and the decoder")
    func depthLimit() throws {
        try verifier.verifyDepthLimit(encodingWith: XMLPlistCodec(limits: CodecLimits(maxDepth: 1_000)))
        let small = CodecVerifier(codec: XMLPlistCodec(limits: CodecLimits(maxDepth: 3)))
        try small.verifyDepthLimit(encodingWith: codec)
    }

    @Test("nesting exactly at the limit decodes, also past libxml2's own default of 256 elements")
    func depthAtLimit() throws {
        for maxDepth in [1, 3, 256, 1_000] {
            let limited = XMLPlistCodec(limits: CodecLimits(maxDepth: maxDepth))
            var deep: SyncValue = ["leaf": 1]
            for level in 1..<maxDepth { deep = level % 2 == 0 ? .array([deep]) : ["k": deep] }
            #expect(deep.depth == maxDepth)
            #expect(try limited.decode(limited.encode(deep)) == deep)
        }
    }

    @Test("equal values give equal bytes, whatever order their keys were inserted in")
    func deterministicBytes() throws {
        var forward: [String: SyncValue] = [:]
        var backward: [String: SyncValue] = [:]
        let keys = (0..<50).map { "key\($0)" } + ["é", "e", "Z", "😀", ""]
        for key in keys { forward[key] = .string(key) }
        for key in keys.reversed() { backward[key] = .string(key) }
        #expect(try codec.encode(.dictionary(forward)) == codec.encode(.dictionary(backward)))
    }
}
