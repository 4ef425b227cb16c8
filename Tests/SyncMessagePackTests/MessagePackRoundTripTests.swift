import Foundation
import SyncCore
import SyncMessagePack
import SyncTesting
import Testing

@Suite("MessagePack codec: the CodecVerifier's promises")
struct MessagePackRoundTripTests {
    let codec = MessagePackCodec()
    var verifier: CodecVerifier { CodecVerifier(codec: codec) }

    @Test("identity: id, media types and features")
    func identity() {
        #expect(codec.id == .messagePack)
        #expect(codec.mediaTypes == ["application/x-msgpack", "application/msgpack", "application/vnd.msgpack"])
        #expect(codec.primaryMediaType == "application/x-msgpack")
        #expect(codec.accepts(mediaType: "Application/MsgPack; charset=binary"))
        #expect(codec.features == [.null, .date, .data, .unsignedInteger, .nonFiniteReal])
        #expect(codec.limits == .default)
    }

    @Test("the nested sample and the edge values round-trip")
    func fixedSample() throws {
        try verifier.verifyRoundTrip([
            MessagePackTestSupport.nestedSample,
            .null, true, false, 0, -1, 127, 128, -32, -33, .integer(.max), .integer(.min),
            .unsignedInteger(UInt64(Int64.max) + 1), .unsignedInteger(.max),
            0.0, .real(-0.0), 1.5, .real(.pi), .real(.greatestFiniteMagnitude), .real(.leastNonzeroMagnitude),
            .real(.infinity), .real(-.infinity),
            "", "é中😀", .string(String(repeating: "ab", count: 40_000)),
            .data([]), .data(Array(repeating: 7, count: 70_000)),
            .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: 4_294_967_295)),
            .date(Date(timeIntervalSince1970: 4_294_967_296)), .date(Date(timeIntervalSince1970: -2_208_988_800)),
            .date(Date(timeIntervalSinceReferenceDate: 0.5)), .date(Date(timeIntervalSinceReferenceDate: 756_000_000.123)),
            .date(Date(timeIntervalSince1970: 253_402_300_799.999)), .date(.distantPast), .date(.distantFuture),
            .array((0..<70_000).map { .integer(Int64($0)) }),
            .dictionary(Dictionary(uniqueKeysWithValues: (0..<70_000).map { ("k\($0)", SyncValue.integer(Int64($0))) })),
            [[], [:], [[[]]], ["": ""]],
        ])
    }

    @Test("NaN survives with its bits")
    func notANumber() throws {
        let quiet = Double.nan
        let payload = Double(bitPattern: 0x7FF8_0000_0000_1234)
        for real in [quiet, -quiet, payload] {
            let decoded = try codec.decode(try codec.encode(.real(real)))
            guard case .real(let back) = decoded else {
                Issue.record("NaN decoded as \(decoded)")
                continue
            }
            #expect(back.bitPattern == real.bitPattern)
        }
    }

    @Test("10,000 random values round-trip", arguments: [UInt64(1), 42, 20_240_501])
    func randomValues(seed: UInt64) throws {
        try verifier.verifyRandomRoundTrips(count: 10_000, seed: seed)
    }

    @Test("random dictionaries nested five deep round-trip")
    func randomDeepDictionaries() throws {
        var values = RandomValues(seed: 9, features: codec.features, maxDepth: 5, maxContainerCount: 8)
        try verifier.verifyRoundTrip((0..<2_000).map { _ in values.nextDictionary() })
    }

    @Test("every truncation of the sample is rejected as malformed input")
    func truncations() throws {
        try verifier.verifyTruncationsRejected(of: MessagePackTestSupport.nestedSample)
        let bytes = try codec.encode(MessagePackTestSupport.nestedSample)
        for length in 0..<bytes.count {
            let error = MessagePackTestSupport.decodingError(Array(bytes[..<length]))
            #expect(error?.code == .malformedInput, "prefix of \(length) bytes: \(String(describing: error))")
        }
    }

    @Test("random bytes and corrupted samples never crash the decoder")
    func garbage() throws {
        let rejected = try verifier.verifyGarbageHandled(count: 20_000, seed: 7, sample: MessagePackTestSupport.nestedSample)
        #expect(rejected > 10_000)
    }

    @Test("values nested past the depth limit are refused both ways")
    func depthLimit() throws {
        try verifier.verifyDepthLimit(encodingWith: MessagePackCodec(limits: CodecLimits(maxDepth: 10_000)))
        let shallow = CodecVerifier(codec: MessagePackCodec(limits: CodecLimits(maxDepth: 3)))
        try shallow.verifyDepthLimit(encodingWith: codec)
    }

    @Test("encoding is deterministic: equal dictionaries built in different orders give equal bytes")
    func deterministic() throws {
        var forward: [String: SyncValue] = [:]
        var backward: [String: SyncValue] = [:]
        let keys = (0..<200).map { "key-\($0)-é" }
        for key in keys { forward[key] = .string(key) }
        for key in keys.reversed() { backward[key] = .string(key) }
        #expect(try codec.encode(.dictionary(forward)) == codec.encode(.dictionary(backward)))
    }
}
