import Foundation
import SyncBinaryPlist
import SyncCore
import SyncTesting
import Testing

@Suite("Binary plist round trips and the codec verifier")
struct BinaryPlistRoundTripTests {
    let codec = BinaryPlistCodec()
    let verifier = CodecVerifier(codec: BinaryPlistCodec())

    @Test("identity: id, media types and features")
    func identity() {
        #expect(codec.id == .binaryPlist)
        #expect(codec.mediaTypes == ["application/x-bplist", "application/octet-stream"])
        #expect(codec.primaryMediaType == "application/x-bplist")
        #expect(codec.features == [.date, .data, .unsignedInteger, .nonFiniteReal])
        #expect(!codec.features.contains(.null))
        #expect(codec.limits == .default)
        #expect(codec.accepts(mediaType: "Application/Octet-Stream"))
    }

    @Test("a fixed corpus of every kind round-trips exactly")
    func fixedCorpus() throws {
        let corpus = BinaryPlistCorpus.all
        #expect(corpus.count > 60)
        try verifier.verifyRoundTrip(corpus)
        for value in corpus {
            #expect(PlistCanonicalForm.exactlyEqual(try codec.decode(codec.encode(value)), value))
        }
    }

    @Test("a NaN real keeps its bits; a date that is not finite is refused")
    func notANumber() throws {
        let quiet = Double.nan
        let payload = Double(bitPattern: 0x7FF8_0000_0000_1234)
        for value: SyncValue in [.real(quiet), .real(-quiet), .real(payload)] {
            #expect(PlistCanonicalForm.exactlyEqual(try codec.decode(codec.encode(value)), value))
        }
        for seconds in [Double.nan, payload, .infinity, -.infinity] {
            let error = #expect(throws: CodecError.self) { try codec.encode(.date(Date(timeIntervalSinceReferenceDate: seconds))) }
            #expect(error?.code == .unsupportedValue)
        }
    }

    @Test("10,000 random values round-trip", arguments: [UInt64(1), 20_240_501])
    func randomRoundTrips(seed: UInt64) throws {
        try verifier.verifyRandomRoundTrips(count: 10_000, seed: seed)
    }

    @Test("random messages with wide and deep containers round-trip")
    func randomWideValues() throws {
        var values = RandomValues(seed: 99, features: codec.features, maxDepth: 5, maxContainerCount: 16)
        try verifier.verifyRoundTrip((0..<200).map { _ in values.nextDictionary() })
    }

    @Test("every strict prefix of a sample is rejected")
    func truncations() throws {
        try verifier.verifyTruncationsRejected(of: BinaryPlistCorpus.nestedSample)
        try verifier.verifyTruncationsRejected(of: ["key": "é中😀", "n": -12.5e-7, "u": .unsignedInteger(UInt64.max)])
        try verifier.verifyTruncationsRejected(of: BinaryPlistCorpus.records(count: 3))
        try verifier.verifyTruncationsRejected(of: 5)
    }

    @Test("garbage and corrupted samples never crash the decoder")
    func garbage() throws {
        let rejected = try verifier.verifyGarbageHandled(count: 20_000, seed: 7, sample: BinaryPlistCorpus.nestedSample)
        // Every random string is rejected (no valid header); about half the inputs are corruptions of a valid file.
        #expect(rejected > 10_000)
        let records = BinaryPlistCorpus.records(count: 4)
        try verifier.verifyGarbageHandled(count: 20_000, seed: 8, sample: records)
    }

    @Test("depth past the limit is refused when encoding and decoding", arguments: [1, 16, 256])
    func depthLimit(maxDepth: Int) throws {
        let strict = CodecVerifier(codec: BinaryPlistCodec(limits: CodecLimits(maxDepth: maxDepth)))
        try strict.verifyDepthLimit(encodingWith: BinaryPlistCodec(limits: CodecLimits(maxDepth: maxDepth + 10)))
    }

    @Test("a value exactly at the depth limit is accepted")
    func depthAtLimit() throws {
        let codec = BinaryPlistCodec(limits: CodecLimits(maxDepth: 5))
        var value: SyncValue = ["leaf": 1]
        for _ in 0..<4 { value = [value] }
        #expect(value.depth == 5)
        #expect(try codec.decode(codec.encode(value)) == value)
    }

    @Test("null is refused on encode, wherever it is")
    func nullRefused() {
        for value: SyncValue in [nil, [nil], ["a": [1, nil]]] {
            #expect {
                _ = try codec.encode(value)
            } throws: { error in
                (error as? CodecError)?.code == .unsupportedValue
            }
        }
    }

    @Test("canonically equivalent strings are kept apart, not uniqued into one")
    func canonicallyEquivalentStrings() throws {
        let value: SyncValue = ["é", "e\u{301}", "é"]
        let decoded = try codec.decode(codec.encode(value))
        #expect(PlistCanonicalForm.exactlyEqual(decoded, value))
        let keys: SyncValue = ["é": ["e\u{301}", "é"]]
        #expect(PlistCanonicalForm.exactlyEqual(try codec.decode(codec.encode(keys)), keys))
    }

    @Test("equal values give equal bytes, whatever the dictionary's order")
    func deterministic() throws {
        var forward: [String: SyncValue] = [:]
        var backward: [String: SyncValue] = [:]
        for index in 0..<50 { forward["k\(index)"] = .integer(Int64(index)) }
        for index in (0..<50).reversed() { backward["k\(index)"] = .integer(Int64(index)) }
        #expect(try codec.encode(.dictionary(forward)) == codec.encode(.dictionary(backward)))
    }
}
