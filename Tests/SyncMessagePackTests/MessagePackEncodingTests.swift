import Foundation
import SyncCore
import SyncMessagePack
import Testing

@Suite("MessagePack encoding: smallest forms, sorted keys, refusals")
struct MessagePackEncodingTests {
    let codec = MessagePackCodec()

    @Test(
        "integers take their smallest form",
        arguments: [
            (SyncValue.integer(0), "00"), (127, "7f"), (128, "cc80"), (255, "ccff"), (256, "cd0100"),
            (65_535, "cdffff"), (65_536, "ce00010000"), (4_294_967_295, "ceffffffff"),
            (4_294_967_296, "cf0000000100000000"), (.integer(.max), "cf7fffffffffffffff"),
            (-1, "ff"), (-32, "e0"), (-33, "d0df"), (-128, "d080"), (-129, "d1ff7f"), (-32_768, "d18000"),
            (-32_769, "d2ffff7fff"), (-2_147_483_648, "d280000000"), (-2_147_483_649, "d3ffffffff7fffffff"),
            (.integer(.min), "d38000000000000000"),
            (.unsignedInteger(9_223_372_036_854_775_808), "cf8000000000000000"),
            (.unsignedInteger(.max), "cfffffffffffffffff"),
        ])
    func integers(value: SyncValue, hex: String) throws {
        #expect(try MessagePackTestSupport.encodedHex(value) == hex)
    }

    @Test(
        "scalars: nil, Booleans, reals as float64",
        arguments: [
            (SyncValue.null, "c0"), (true, "c3"), (false, "c2"), (1.5, "cb3ff8000000000000"),
            (.real(-0.0), "cb8000000000000000"), (.real(.infinity), "cb7ff0000000000000"),
            (.real(-.infinity), "cbfff0000000000000"), (0.1, "cb3fb999999999999a"),
        ])
    func scalars(value: SyncValue, hex: String) throws {
        #expect(try MessagePackTestSupport.encodedHex(value) == hex)
    }

    @Test("str, bin, array and map headers grow with their length")
    func lengthForms() throws {
        func prefix(_ value: SyncValue, _ count: Int) throws -> String {
            String(try MessagePackTestSupport.encodedHex(value).prefix(count))
        }
        #expect(try MessagePackTestSupport.encodedHex("") == "a0")
        #expect(try MessagePackTestSupport.encodedHex("é") == "a2c3a9")
        #expect(try prefix(.string(String(repeating: "a", count: 31)), 4) == "bf61")
        #expect(try prefix(.string(String(repeating: "a", count: 32)), 6) == "d92061")
        #expect(try prefix(.string(String(repeating: "a", count: 255)), 6) == "d9ff61")
        #expect(try prefix(.string(String(repeating: "a", count: 256)), 8) == "da010061")
        #expect(try prefix(.string(String(repeating: "a", count: 65_536)), 12) == "db0001000061")
        #expect(try MessagePackTestSupport.encodedHex(.data([])) == "c400")
        #expect(try MessagePackTestSupport.encodedHex(.data([1, 2])) == "c4020102")
        #expect(try prefix(.data(Array(repeating: 0, count: 256)), 8) == "c5010000")
        #expect(try prefix(.data(Array(repeating: 0, count: 65_536)), 12) == "c60001000000")
        #expect(try MessagePackTestSupport.encodedHex([]) == "90")
        #expect(try prefix(.array(Array(repeating: .null, count: 15)), 4) == "9fc0")
        #expect(try prefix(.array(Array(repeating: .null, count: 16)), 8) == "dc0010c0")
        #expect(try prefix(.array(Array(repeating: .null, count: 65_536)), 12) == "dd00010000c0")
        #expect(try MessagePackTestSupport.encodedHex([:]) == "80")
        let fifteen = SyncValue.dictionary(Dictionary(uniqueKeysWithValues: (0..<15).map { (String($0 + 10), .null) }))
        let sixteen = SyncValue.dictionary(Dictionary(uniqueKeysWithValues: (0..<16).map { (String($0 + 10), .null) }))
        let big = SyncValue.dictionary(Dictionary(uniqueKeysWithValues: (0..<65_536).map { (String($0), .null) }))
        #expect(try prefix(fifteen, 8) == "8fa23130")
        #expect(try prefix(sixteen, 12) == "de0010a23130")
        #expect(try prefix(big, 10) == "df00010000")
    }

    @Test("map keys are written sorted by their UTF-8 bytes")
    func keyOrder() throws {
        let value: SyncValue = ["b": 1, "a": 2, "é": 3, "e": 4, "😀": 5, "\u{FFFF}": 6, "Z": 7, "": 8, "aa": 9]
        // "" < "Z" < "a" < "aa" < "b" < "e" < "é" (c3 a9) < U+FFFF (ef bf bf) < 😀 (f0 9f 98 80)
        #expect(
            try MessagePackTestSupport.encodedHex(value)
                == "89" + "a008" + "a15a07" + "a16102" + "a2616109" + "a16201" + "a16504" + "a2c3a903"
                + "a3efbfbf06" + "a4f09f988005")
    }

    @Test(
        "dates take the smallest exact timestamp form",
        arguments: [
            (0.0, "d6ff00000000"), (1_714_566_600, "d6ff663235c8"), (4_294_967_295, "d6ffffffffff"),
            (4_294_967_296, "d7ff0000000100000000"), (0.5, "d7ff7735940000000000"),
            (17_179_869_183, "d7ff00000003ffffffff"), (17_179_869_184, "c70cff000000000000000400000000"),
            (-1, "c70cff00000000ffffffffffffffff"), (-0.5, "c70cff1dcd6500ffffffffffffffff"),
        ])
    func timestamps(secondsSince1970: Double, hex: String) throws {
        #expect(try MessagePackTestSupport.encodedHex(.date(Date(timeIntervalSince1970: secondsSince1970))) == hex)
    }

    @Test("a date near 2001 with sub-nanosecond precision, or not finite, or too far away, is refused")
    func inexactDates() {
        for interval in [1e-12, 0.1e-9, 1.5e-10, Double.infinity, -Double.infinity, Double.nan, 1e300, -1e17] {
            let error = MessagePackTestSupport.encodingError(.date(Date(timeIntervalSinceReferenceDate: interval)))
            #expect(error?.code == .unsupportedValue, "\(interval): \(String(describing: error))")
        }
        // A date near 2001 that is a whole number of nanoseconds is exact.
        #expect(MessagePackTestSupport.encodingError(.date(Date(timeIntervalSinceReferenceDate: 0.25))) == nil)
    }

    @Test("the encoder refuses a value deeper than the limit")
    func depthLimit() {
        let shallow = MessagePackCodec(limits: CodecLimits(maxDepth: 2))
        #expect(MessagePackTestSupport.encodingError([[1]], codec: shallow) == nil)
        #expect(MessagePackTestSupport.encodingError([[[1]]], codec: shallow)?.code == .limitExceeded)
        #expect(MessagePackTestSupport.encodingError(["a": ["b": [:]]], codec: shallow)?.code == .limitExceeded)
    }

    @Test("the example in the documentation is exact")
    func documentedExample() throws {
        #expect(try MessagePackTestSupport.encodedHex(["name": "Ada", "born": 1815]) == "82a4626f726ecd0717a46e616d65a3416461")
    }
}
