import Foundation
import SyncBinaryPlist
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncTesting
import SyncXMLPlist
import Testing

/// The four codecs, by their command-line names.
let allCodecs: [(name: String, codec: any SyncCodec)] = [
    ("json", JSONCodec()), ("xml-plist", XMLPlistCodec()), ("binary-plist", BinaryPlistCodec()),
    ("msgpack", MessagePackCodec()),
]

@Suite("conversion between the four codecs")
struct CodecConversionTests {
    @Test("every codec passes the codec verifier", arguments: allCodecs.indices)
    func verifier(index: Int) throws {
        let codec = allCodecs[index].codec
        let verifier = CodecVerifier(codec: codec)
        var random = RandomValues(seed: 101 + UInt64(index), features: codec.features)
        let values = (0..<2_000).map { _ in xmlSafe(random.next()) }
        try verifier.verifyRoundTrip(values)
        let sample: SyncValue = ["name": "Ada", "born": 1815, "tags": ["math", "poetry"], "ratio": 0.25]
        try verifier.verifyTruncationsRejected(of: sample)
        let decoded = try verifier.verifyGarbageHandled(count: 2_000, seed: 7, sample: sample)
        #expect(decoded < 2_000, "garbage must not all decode")
    }

    @Test(
        "a value that fits both formats converts there and back unchanged",
        arguments: allCodecs.indices.flatMap { from in allCodecs.indices.filter { $0 != from }.map { (from, $0) } })
    func anyToAny(from: Int, to: Int) throws {
        let source = allCodecs[from].codec
        let target = allCodecs[to].codec
        var random = RandomValues(seed: UInt64(from * 10 + to), features: source.features.intersection(target.features))
        for index in 0..<1_000 {
            let value = xmlSafe(random.next())
            let read = try source.decode(source.encode(value))
            let converted = try target.decode(target.encode(read))
            let back = try source.decode(source.encode(converted))
            #expect(
                same(back, value),
                "value #\(index): \(allCodecs[from].name) → \(allCodecs[to].name) → back changed \(value) into \(back)")
        }
    }

    @Test("a value a format cannot carry is refused with a clear error, never changed")
    func refusals() throws {
        for plist in [XMLPlistCodec() as any SyncCodec, BinaryPlistCodec()] {
            let error = #expect(throws: CodecError.self) { try plist.encode(["a": .null]) }
            #expect(error?.code == .unsupportedValue)
            #expect(error.map { "\($0)" }?.contains("null") == true)
        }
        let error = #expect(throws: CodecError.self) { try JSONCodec().encode(.real(.nan)) }
        #expect(error?.code == .unsupportedValue)
    }
}

/// `value` with every character XML 1.0 cannot carry replaced by "?", so
/// that the same random values serve every codec.
func xmlSafe(_ value: SyncValue) -> SyncValue {
    func clean(_ string: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0x9, 0xA, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: scalars.append(scalar)
            default: scalars.append("?")  // includes the carriage return, which XML reads as a line feed
            }
        }
        return String(scalars)
    }
    switch value {
    case .string(let string): return .string(clean(string))
    case .array(let elements): return .array(elements.map(xmlSafe))
    case .dictionary(let entries):
        return .dictionary(Dictionary(entries.map { (clean($0.key), xmlSafe($0.value)) }) { first, _ in first })
    default: return value
    }
}

/// Whether two values are the same, NaN counting as equal to NaN.
func same(_ lhs: SyncValue, _ rhs: SyncValue) -> Bool {
    switch (lhs, rhs) {
    case (.real(let left), .real(let right)): return left.isNaN ? right.isNaN : left == right && left.sign == right.sign
    case (.array(let left), .array(let right)):
        return left.count == right.count && zip(left, right).allSatisfy { same($0, $1) }
    case (.dictionary(let left), .dictionary(let right)):
        return left.count == right.count && left.allSatisfy { key, value in right[key].map { same(value, $0) } ?? false }
    default: return lhs == rhs
    }
}
