import Foundation
import SyncCore
import Testing

@Suite("SyncValue through other coders")
struct SyncValueCodableConformanceTests {
    @Test func jsonCodersCarryTheJSONShapedCases() throws {
        let value: SyncValue = [
            "name": "Ada", "born": 1815, "ratio": 0.5, "alive": false, "none": nil,
            "list": [1, "two", [3.5]], "huge": .unsignedInteger(.max),
        ]
        let bytes = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(SyncValue.self, from: bytes) == value)
    }

    @Test func recordFieldsInsideATypedMessageStayExact() throws {
        struct Change: Codable, Equatable {
            var id: RecordID
            var fields: [String: SyncValue]
        }
        let change = Change(id: "5f0c", fields: ["photo": .data([1, 2]), "when": .date(Date(timeIntervalSince1970: 3))])
        let value = try SyncValueEncoder().encode(change)
        #expect(value == ["id": "5f0c", "fields": ["photo": .data([1, 2]), "when": .date(Date(timeIntervalSince1970: 3))]])
        #expect(try SyncValueDecoder().decode(Change.self, from: value) == change)
    }
}
