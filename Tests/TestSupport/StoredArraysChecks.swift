import Foundation
import SyncCore
import SyncTesting
import Testing

/// Checks of a codec that reads pages straight into the stored form (``StoredFieldsDecoding``): what it
/// reads must be what decoding the page and encoding each record's fields gives.
package enum StoredArraysChecks {
    /// Whether a top-level key holds records: a model's name, which starts with a capital here.
    package static func isRecords(_ key: String) -> Bool { key.first?.isUppercase == true }

    /// Random pages of records, for `encode` to write (once sorted, once otherwise) and the check to read.
    package static func randomPages(seed: UInt64, features: CodecFeatures, count: Int = 200) -> [SyncValue] {
        var random = RandomValues(seed: seed, features: features, maxDepth: 4)
        return (0..<count).map { round in
            let records = (0..<3).map { _ in random.nextDictionary() }
            return ["latestUST": .integer(Int64(round)), "hasMore": true, "Contact": .array(records), "Note": []]
        }
    }

    /// Checks that `bytes` read into stored fields by `codec` give what decoding them gives.
    package static func expectSameAsDecoding(
        _ bytes: [UInt8], codec: some StoredFieldsDecoding, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let document = try #require(codec.decodeStoredArrays(bytes, where: isRecords), sourceLocation: sourceLocation)
        let decoded = try #require(try codec.decode(bytes).dictionaryValue, sourceLocation: sourceLocation)
        #expect(document.values == decoded.filter { !isRecords($0.key) }, sourceLocation: sourceLocation)
        #expect(Set(document.storedArrays.keys) == Set(decoded.keys.filter(isRecords)), sourceLocation: sourceLocation)
        for (key, blobs) in document.storedArrays {
            let items = try #require(decoded[key]?.arrayValue, sourceLocation: sourceLocation)
            let expected = try items.map { [UInt8](try StoredValueFormat.encode(fields: try #require($0.dictionaryValue))) }
            #expect(blobs == expected, "records under \(key)", sourceLocation: sourceLocation)
        }
    }
}
