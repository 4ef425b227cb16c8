import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// A pulled page read straight into the stored form must give, for every record, the very blob that
/// decoding the page and encoding the record's fields gives, and must leave to `decode(_:)` whatever
/// it does not read the same way.
@Suite("JSON read into stored fields: the blobs of the decoded values")
struct JSONStoredArraysTests {
    let codec = JSONCodec()

    private static func isRecords(_ key: String) -> Bool { StoredArraysChecks.isRecords(key) }

    /// Checks that `text` read into stored fields gives what decoding it gives.
    private func expectSameAsDecoding(_ text: String, codec: JSONCodec? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try StoredArraysChecks.expectSameAsDecoding(Array(text.utf8), codec: codec ?? self.codec, sourceLocation: sourceLocation)
    }

    /// `value` as JSON with every dictionary's keys in reverse order and white space around everything.
    private func reversedJSON(_ value: SyncValue) throws -> String {
        switch value {
        case .dictionary(let entries):
            let members = try entries.keys.sorted(by: >).map { key in
                " \(try JSONTestSupport.encodedText(.string(key))) :\t\(try reversedJSON(entries[key] ?? nil)) "
            }
            return "{ " + members.joined(separator: ",\n") + " }"
        case .array(let elements):
            return "[ " + (try elements.map(reversedJSON)).joined(separator: " , ") + " ]"
        default:
            return try JSONTestSupport.encodedText(value)
        }
    }

    @Test("random records, written sorted or in reverse order with white space, read into the blobs of their values")
    func randomRecords() throws {
        for page in StoredArraysChecks.randomPages(seed: 20_261_127, features: [.null, .unsignedInteger]) {
            try expectSameAsDecoding(try JSONTestSupport.encodedText(page))
            try expectSameAsDecoding(try reversedJSON(page))
        }
    }

    @Test("escapes, non-ASCII values, every kind of number and empty containers read as decoding reads them")
    func awkwardValues() throws {
        try expectSameAsDecoding(
            #"""
            {"Contact": [{"é": 1, "e\u0300x": 2, "\u00e8": 3, "z": "\u00e9\ud83d\ude00\n\"", "a": -0.0, "b": 1e300, "c": 18446744073709551615, "d": -9223372036854775808,
              "e": [], "f": {}, "g": [{}, [[]], null, true, false], "h": {"y": {"x": 1}, "b": 2}, "\u0041": "escaped key"}],
             "latestUST": 3, "_id": "not read here", "hasMore": false}
            """#)
        // Counts of 128 and more take two bytes, inserted when their container closes.
        let many = (0..<300).map(String.init).joined(separator: ",")
        let wide = (0..<130).map { #""k\#($0)": \#($0)"# }.joined(separator: ",")
        try expectSameAsDecoding(#"{"Contact": [{"many": [\#(many)], "wide": {\#(wide)}}, {\#(wide)}]}"#)
        try expectSameAsDecoding(#"{}"#)
        try expectSameAsDecoding(#"{"Contact": []}"#)
    }

    @Test("what decoding refuses, and records that are not dictionaries, are left to decoding")
    func leftToDecoding() throws {
        let refused = [
            #"{"Contact": [{"a": 1, "a": 2}]}"#,  // a duplicate key in a record
            #"{"Contact": [{"b": {"a": 1, "a": 1}}]}"#,  // a duplicate key nested
            #"{"Contact": [{"a": 1}], "Contact": []}"#,  // a duplicate key in the page
            #"{"latestUST": null, "latestUST": 5}"#,  // a duplicate key in the page, the first null
            #"{"Contact": [{"a": 1}"#,  // cut short
            #"{"Contact": [{"a": 01}]}"#,  // a leading zero
            #"{"Contact": [{"a": tru}]}"#,
            #"{"Contact": [{"a": "\ud800"}]}"#,  // a lone surrogate
            #"{"Contact": [{"a": 1}]} x"#,
            "\u{FEFF}{\"Contact\": []}",
        ]
        for text in refused {
            #expect(codec.decodeStoredArrays(Array(text.utf8), where: Self.isRecords) == nil, "\(text)")
            #expect(JSONTestSupport.decodingError(Array(text.utf8)) != nil, "\(text)")
        }
        // Two spellings of é: one key, as decoding reads it.
        let twice = #"{"Contact": [{"\#u{E9}": 1, "e\#u{301}": 2}]}"#
        #expect(codec.decodeStoredArrays(Array(twice.utf8), where: Self.isRecords) == nil)
        #expect(JSONTestSupport.decodingError(Array(twice.utf8)) != nil)
        let readOtherwise = [
            #"{"Contact": [1, 2]}"#,  // records that are not dictionaries
            #"{"Contact": {"a": 1}}"#,  // not an array
            #"[1]"#,
        ]
        for text in readOtherwise {
            #expect(codec.decodeStoredArrays(Array(text.utf8), where: Self.isRecords) == nil, "\(text)")
            #expect(JSONTestSupport.decodingError(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test("the depth, value count and size limits hold as they do for decoding")
    func limits() throws {
        for depth in 2...6 {
            var nested = "1"
            for _ in 0..<depth { nested = "[\(nested)]" }
            let text = #"{"latestUST": 1, "Contact": [{"deep": \#(nested)}], "other": \#(nested)}"#
            for maxDepth in 1...(depth + 4) {
                let limited = JSONCodec(limits: CodecLimits(maxDepth: maxDepth))
                let decodes = JSONTestSupport.decodingError(Array(text.utf8), codec: limited) == nil
                let read = limited.decodeStoredArrays(Array(text.utf8), where: Self.isRecords) != nil
                #expect(read == decodes, "depth \(depth), limit \(maxDepth)")
                if decodes { try expectSameAsDecoding(text, codec: limited) }
            }
        }
        let text = #"{"latestUST": 1, "Contact": [{"a": [1, 2, 3]}, {"b": "x"}]}"#
        for maxElementCount in 1...12 {
            let limited = JSONCodec(limits: CodecLimits(maxElementCount: maxElementCount))
            let decodes = JSONTestSupport.decodingError(Array(text.utf8), codec: limited) == nil
            #expect((limited.decodeStoredArrays(Array(text.utf8), where: Self.isRecords) != nil) == decodes, "\(maxElementCount) values")
        }
        let small = JSONCodec(limits: CodecLimits(maxInputBytes: text.utf8.count - 1))
        #expect(small.decodeStoredArrays(Array(text.utf8), where: Self.isRecords) == nil)
    }

    @Test("the named entries of a page are read, the others skipped by their brackets and quotes")
    func namedEntries() throws {
        var random = RandomValues(seed: 20_261_128, features: [.null, .unsignedInteger], maxDepth: 4)
        let names: Set<String> = ["latestUST", "hasMore", "_id"]
        for round in 0..<100 {
            let page: SyncValue = [
                "Contact": .array((0..<3).map { _ in random.nextDictionary() }), "latestUST": .integer(Int64(round)),
                "hasMore": round.isMultiple(of: 2) ? true : nil, "zzz": random.next(),
            ]
            for text in [try JSONTestSupport.encodedText(page), try reversedJSON(page)] {
                let entries = try #require(codec.decodeEntries(Array(text.utf8), named: names))
                #expect(entries == (page.dictionaryValue ?? [:]).filter { names.contains($0.key) })
            }
        }
        let tricky = #"{"Contact": [{"a": "x\"]}{\\", "b": [1, {"c": "]"}]}], "latestUST": 5, "n": -1.5e3, "t": true}"#
        #expect(codec.decodeEntries(Array(tricky.utf8), named: names) == ["latestUST": 5])
        for broken in [#"{"Contact": [{"a": 1}, "latestUST": 5"#, #"{"Contact": "open, "latestUST": 5}"#, "[1]", #"{"latestUST": 01}"#] {
            #expect(codec.decodeEntries(Array(broken.utf8), named: names) == nil, "\(broken)")
        }
    }
}
