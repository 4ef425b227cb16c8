import SyncCore
import SyncJSON
import SyncTesting
import Testing

@Suite("JSON round trips and the codec verifier")
struct JSONRoundTripTests {
    let codec = JSONCodec()
    let verifier = CodecVerifier(codec: JSONCodec())

    @Test("identity: id, media types and features")
    func identity() {
        #expect(codec.id == .json)
        #expect(codec.mediaTypes == ["application/json"])
        #expect(codec.features == [.null, .unsignedInteger])
        #expect(codec.limits == .default)
        #expect(codec.accepts(mediaType: "Application/JSON; charset=utf-8"))
    }

    @Test("a fixed sample of every kind JSON carries round-trips")
    func fixedSample() throws {
        let carried = JSONPythonInteropTests.writtenCorpus.filter { $0.kind != .date && $0.kind != .data }
        #expect(carried.count > 40)
        try verifier.verifyRoundTrip(carried)
        for value in carried {
            #expect(CanonicalForm.exactlyEqual(try codec.decode(codec.encode(value)), value))
        }
    }

    @Test("10,000 random values round-trip", arguments: [UInt64(1), 20_240_501])
    func randomRoundTrips(seed: UInt64) throws {
        try verifier.verifyRandomRoundTrips(count: 10_000, seed: seed)
    }

    @Test("every strict prefix of a nested sample is rejected")
    func truncations() throws {
        try verifier.verifyTruncationsRejected(of: JSONTestSupport.nestedSample)
        try verifier.verifyTruncationsRejected(of: ["key": "é中😀 \u{2028}", "n": -12.5e-7])
    }

    @Test("garbage and corrupted samples never crash the decoder")
    func garbage() throws {
        let rejected = try verifier.verifyGarbageHandled(count: 20_000, seed: 7, sample: JSONTestSupport.nestedSample)
        #expect(rejected > 15_000)
    }

    @Test("depth past the limit is refused when encoding and decoding", arguments: [1, 16, 256])
    func depthLimit(maxDepth: Int) throws {
        let strict = CodecVerifier(codec: JSONCodec(limits: CodecLimits(maxDepth: maxDepth)))
        try strict.verifyDepthLimit(encodingWith: JSONCodec(limits: CodecLimits(maxDepth: maxDepth + 10)))
    }

    @Test("a value exactly at the depth limit is accepted")
    func depthAtLimit() throws {
        let codec = JSONCodec(limits: CodecLimits(maxDepth: 5))
        var value: SyncValue = ["leaf": 1]
        for _ in 0..<4 { value = [value] }
        #expect(value.depth == 5)
        #expect(try codec.decode(codec.encode(value)) == value)
    }

    @Test("reals round-trip bit for bit", arguments: [
        0.1, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude,
        Double.leastNormalMagnitude.nextDown, 0.0, -0.0, 1.0, 3.0, 1e16, 1e-7, 123_456_789.123_456_78, .pi, 9_007_199_254_740_993.0,
        0.30000000000000004, 1e300, 1e-300, 4.35, 1e22, 1e23,
    ])
    func exactReals(real: Double) throws {
        let decoded = try codec.decode(codec.encode(.real(real)))
        guard case .real(let back) = decoded else {
            Issue.record("\(real) decoded as \(decoded)")
            return
        }
        #expect(back.bitPattern == real.bitPattern)
    }

    @Test("random finite bit patterns round-trip exactly")
    func randomBitPatterns() throws {
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<20_000 {
            let real = Double(bitPattern: generator.next())
            guard real.isFinite else { continue }
            let decoded = try codec.decode(codec.encode(.real(real)))
            guard case .real(let back) = decoded, back.bitPattern == real.bitPattern else {
                Issue.record("\(real) came back as \(decoded)")
                return
            }
        }
    }

    @Test("integers keep their canonical kind at the edges", arguments: [
        SyncValue.integer(.min), .integer(.max), .integer(0), .integer(-1),
        .unsignedInteger(UInt64(Int64.max) + 1), .unsignedInteger(.max),
    ])
    func integerEdges(value: SyncValue) throws {
        #expect(try codec.decode(codec.encode(value)) == value)
    }
}
