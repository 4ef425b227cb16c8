import Foundation
import SyncCore
import SyncMessagePack
import SyncTesting
import TestSupport
import Testing

/// A page read straight into the stored form must give, for every record, the very blob that decoding
/// the page and encoding the record's fields gives, and must leave to `decode(_:)` what it refuses.
@Suite("MessagePack read into stored fields: the blobs of the decoded values")
struct MessagePackStoredArraysTests {
    let codec = MessagePackCodec()

    private static func isRecords(_ key: String) -> Bool { StoredArraysChecks.isRecords(key) }

    /// Checks that `bytes` read into stored fields give what decoding them gives, and the named entries too.
    private func expectSameAsDecoding(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        try StoredArraysChecks.expectSameAsDecoding(bytes, codec: codec, sourceLocation: sourceLocation)
        let decoded = try codec.decode(bytes).dictionaryValue ?? [:]
        let named = try #require(codec.decodeEntries(bytes, named: ["latestUST", "hasMore"]), sourceLocation: sourceLocation)
        #expect(named == decoded.filter { ["latestUST", "hasMore"].contains($0.key) }, sourceLocation: sourceLocation)
    }

    /// `value` as MessagePack with every map's keys in reverse order.
    private func reversedBytes(_ value: SyncValue) throws -> [UInt8] {
        func header(_ count: Int, fix: UInt8, sixteen: UInt8) -> [UInt8] {
            count < 16 ? [fix | UInt8(count)] : [sixteen, UInt8(count >> 8), UInt8(count & 0xFF)]
        }
        switch value {
        case .dictionary(let entries):
            var bytes = header(entries.count, fix: 0x80, sixteen: 0xDE)
            for key in entries.keys.sorted(by: >) {
                bytes += try codec.encode(.string(key))
                bytes += try reversedBytes(entries[key] ?? .null)
            }
            return bytes
        case .array(let elements):
            return try elements.reduce(header(elements.count, fix: 0x90, sixteen: 0xDC)) { $0 + (try reversedBytes($1)) }
        default:
            return try codec.encode(value)
        }
    }

    @Test("random records, written sorted or in reverse order, read into the blobs of their values")
    func randomRecords() throws {
        for page in StoredArraysChecks.randomPages(seed: 20_261_129, features: codec.features) {
            try expectSameAsDecoding(try codec.encode(page))
            try expectSameAsDecoding(try reversedBytes(page))
        }
    }

    @Test("non-ASCII keys, every kind of scalar and wide containers read as decoding reads them")
    func awkwardValues() throws {
        let wide = SyncValue.dictionary(Dictionary(uniqueKeysWithValues: (0..<130).map { ("k\($0)", SyncValue.integer(Int64($0))) }))
        let record: SyncValue = [
            "é": 1, "e\u{300}x": 2, "z": "é😀\n", "a": .real(-0.0), "c": .unsignedInteger(.max), "d": .integer(.min),
            "e": [], "f": [:], "g": [[:], [[]], .null, true, false], "h": ["y": ["x": 1], "b": 2],
            "when": .date(Date(timeIntervalSince1970: 1_714_566_600.5)), "photo": .data([0, 1, 2, 255]),
            "many": .array((0..<300).map { .integer(Int64($0)) }), "wide": wide,
        ]
        try expectSameAsDecoding(try codec.encode(["Contact": [record, wide], "latestUST": 3, "_id": "x", "hasMore": false]))
        try expectSameAsDecoding(try reversedBytes(["Contact": [record]]))
        try expectSameAsDecoding(try codec.encode([:]))
        try expectSameAsDecoding(try codec.encode(["Contact": []]))
    }

    @Test("what decoding refuses, and records that are not dictionaries, are left to decoding")
    func leftToDecoding() throws {
        let refused = [
            "81a7436f6e7461637491" + "82a16101a16102",  // {"Contact": [{"a": 1, "a": 2}]}
            "81a7436f6e746163749181a16282a16101a16101",  // {"Contact": [{"b": {"a": 1, "a": 1}}]}
            "81a7436f6e74616374",  // cut short
            "81a7436f6e746163749181a161c1",  // the unused byte 0xc1
            "81a7436f6e746163749181a161a1ff",  // a str that is not UTF-8
            "80c0",  // bytes after the value
        ]
        for hex in refused {
            let bytes = MessagePackTestSupport.bytes(hex)
            #expect(codec.decodeStoredArrays(bytes, where: Self.isRecords) == nil, "\(hex)")
            #expect(MessagePackTestSupport.decodingError(bytes) != nil, "\(hex)")
        }
        let readOtherwise: [SyncValue] = [["Contact": [1, 2]], ["Contact": ["a": 1]], [1]]
        for value in readOtherwise {
            let bytes = try codec.encode(value)
            #expect(codec.decodeStoredArrays(bytes, where: Self.isRecords) == nil, "\(value)")
            #expect(MessagePackTestSupport.decodingError(bytes) == nil, "\(value)")
        }
    }

    @Test("the depth limit holds as it does for decoding")
    func depthLimit() throws {
        var nested: SyncValue = 1
        for _ in 0..<5 { nested = [nested] }
        let bytes = try codec.encode(["latestUST": 1, "Contact": [["deep": nested]]])
        for maxDepth in 1...9 {
            let limited = MessagePackCodec(limits: CodecLimits(maxDepth: maxDepth))
            let decodes = MessagePackTestSupport.decodingError(bytes, codec: limited) == nil
            #expect((limited.decodeStoredArrays(bytes, where: Self.isRecords) != nil) == decodes, "limit \(maxDepth)")
        }
    }
}
