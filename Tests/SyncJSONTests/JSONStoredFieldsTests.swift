import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import Testing

/// A pull's answer written from records' stored fields must be the very bytes of the same answer
/// decoded and encoded as values.
@Suite("JSON from stored fields: the same bytes as from values")
struct JSONStoredFieldsTests {
    let codec = JSONCodec()

    /// A document of `records` under `Model`, each with `ust` added and `isDirty` left out, and a `latestUST`.
    private func document(_ records: [[String: SyncValue]], adding added: [String: SyncValue] = ["ust": 7]) throws -> StoredFieldsDocument {
        let stored = try records.map { StoredFields(try StoredValueFormat.encode(fields: $0), omitting: ["isDirty"], adding: added) }
        return StoredFieldsDocument(values: ["latestUST": 42, "hasMore": true], storedArrays: ["Model": stored])
    }

    @Test("random records of every kind of value give the bytes their values give")
    func randomRecords() throws {
        var random = RandomValues(seed: 20_261_127, features: [.null, .date, .data, .unsignedInteger], maxDepth: 4)
        for _ in 0..<200 {
            let records = (0..<3).map { _ in random.nextDictionary().dictionaryValue ?? [:] }
            let document = try document(records)
            #expect(try codec.encode(document) == codec.encode(document.value()))
        }
    }

    @Test("added fields take their sorted place and replace stored ones; omitted fields are left out")
    func addedAndOmitted() throws {
        let fields: [String: SyncValue] = [
            "a": 1, "isDirty": true, "ust": "stale", "z": "last", "Name": "Ada \u{2028} \"Lovelace\"",
            "born": .date(Date(timeIntervalSince1970: 1_700_000_000.25)), "photo": .data([0, 1, 2, 250]), "nested": ["k": [nil, 2.5]],
        ]
        let document = try document([fields, [:], ["isDirty": false]], adding: ["ust": 9, "0first": nil, "zz": [1]])
        let text = String(decoding: try codec.encode(document), as: UTF8.self)
        #expect(try codec.encode(document) == codec.encode(document.value()))
        #expect(text.contains(#"{"0first":null,"Name":"Ada \u2028 \"Lovelace\"","a":1,"born":""#))
        #expect(text.contains(#""ust":9,"z":"last","zz":[1]}"#))
        #expect(text.contains(#"{"0first":null,"ust":9,"zz":[1]},{"0first":null,"ust":9,"zz":[1]}]"#))
        #expect(!text.contains("isDirty") && !text.contains("stale"))
    }

    @Test("a value nested past the codec's depth limit is refused as encoding its value is")
    func depthLimit() throws {
        var deep: SyncValue = 1
        for _ in 0..<6 { deep = [deep] }
        let shallow = JSONCodec(limits: CodecLimits(maxDepth: 6))
        let document = try document([["deep": deep]])
        #expect(throws: CodecError.self) { try shallow.encode(document.value()) }
        #expect(throws: CodecError.self) { try shallow.encode(document) }
        #expect(try codec.encode(document) == codec.encode(document.value()))
    }

    @Test("stored fields that are not a well-formed dictionary are reported as corrupt, not written")
    func corruptFields() throws {
        let notDictionary = StoredFields(try StoredValueFormat.encode(.string("x")))
        var truncated = try StoredValueFormat.encode(fields: ["name": "Ada"])
        truncated.removeLast()
        var badUTF8 = try StoredValueFormat.encode(fields: ["name": "Ada"])
        badUTF8[badUTF8.count - 1] = 0xFF
        for fields in [notDictionary, StoredFields(truncated), StoredFields(badUTF8)] {
            let error = #expect(throws: StoreError.self) {
                try codec.encode(StoredFieldsDocument(storedArrays: ["Model": [fields]]))
            }
            #expect(error?.code == .corrupt)
        }
    }
}
