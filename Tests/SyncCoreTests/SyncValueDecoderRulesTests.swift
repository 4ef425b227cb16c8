import FoundationEssentials
import SyncCore
import Testing

@Suite("Codable bridge: decoding errors and leniencies")
struct SyncValueDecoderRulesTests {
    let decoder = SyncValueDecoder()

    struct Item: Codable, Equatable {
        var name: String
        var count: Int
        var enabled: Bool?
    }

    struct Order: Codable, Equatable {
        var items: [Item]
        var note: String?
    }

    /// The coding path of a `DecodingError`, as strings.
    private func path(of error: any Error) -> [String]? {
        guard let error = error as? DecodingError else { return nil }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return context.codingPath.map(\.stringValue)
        case .keyNotFound(let key, let context):
            return context.codingPath.map(\.stringValue) + [key.stringValue]
        @unknown default:
            return nil
        }
    }

    private func message(of error: any Error) -> String {
        guard let error = error as? DecodingError else { return "" }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context),
            .keyNotFound(_, let context):
            return context.debugDescription
        @unknown default:
            return ""
        }
    }

    // MARK: Errors

    @Test func typeMismatchNamesThePathThroughArrays() throws {
        let value: SyncValue = ["items": [["name": "a", "count": 1], ["name": "b", "count": "two"]]]
        let error = try #require(throws: DecodingError.self) { try decoder.decode(Order.self, from: value) }
        guard case .typeMismatch = error else {
            Issue.record("expected typeMismatch, got \(error)")
            return
        }
        #expect(path(of: error) == ["items", "Index 1", "count"])
    }

    @Test func anIntegerStringIsNotAnInteger() throws {
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Item.self, from: ["name": "a", "count": "42"])
        }
        guard case .typeMismatch = error else {
            Issue.record("expected typeMismatch, got \(error)")
            return
        }
        #expect(path(of: error) == ["count"])
        #expect(message(of: error).contains("\"42\""))
    }

    @Test func booleansAreStrict() throws {
        #expect(throws: DecodingError.self) { try decoder.decode(Bool.self, from: .integer(1)) }
        #expect(throws: DecodingError.self) { try decoder.decode(Bool.self, from: "true") }
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Item.self, from: ["name": "a", "count": 1, "enabled": 0])
        }
        #expect(path(of: error) == ["enabled"])
    }

    @Test func aMissingKeyIsKeyNotFound() throws {
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Order.self, from: ["items": [["name": "a"]]])
        }
        guard case .keyNotFound(let key, _) = error else {
            Issue.record("expected keyNotFound, got \(error)")
            return
        }
        #expect(key.stringValue == "count")
        #expect(path(of: error) == ["items", "Index 0", "count"])
    }

    @Test func nullForARequiredValueIsValueNotFound() throws {
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Item.self, from: ["name": .null, "count": 1])
        }
        guard case .valueNotFound = error else {
            Issue.record("expected valueNotFound, got \(error)")
            return
        }
        #expect(path(of: error) == ["name"])
    }

    @Test func integersThatDoNotFitAreDataCorrupted() throws {
        for (type, value) in [(Int8.self as any Decodable.Type, SyncValue.integer(300)),
            (UInt8.self, .integer(-1)), (Int64.self, .unsignedInteger(.max)), (UInt32.self, .integer(1 << 40))]
        {
            let error = try #require(throws: DecodingError.self) { try decoder.decode(type, from: value) }
            guard case .dataCorrupted = error else {
                Issue.record("expected dataCorrupted for \(type), got \(error)")
                continue
            }
        }
    }

    @Test func aScalarWhereAContainerIsExpectedIsATypeMismatch() throws {
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Order.self, from: ["items": ["name": "not a list"]])
        }
        guard case .typeMismatch = error else {
            Issue.record("expected typeMismatch, got \(error)")
            return
        }
        #expect(path(of: error) == ["items"])
        #expect(throws: DecodingError.self) { try decoder.decode(Item.self, from: "just a string") }
    }

    @Test func badDateDataURLAndUUIDStringsAreDataCorrupted() throws {
        struct Typed: Decodable {
            var when: Date?
            var blob: Data?
            var link: URL?
            var id: UUID?
            var amount: Decimal?
        }
        let cases: [(String, SyncValue)] = [
            ("when", "yesterday"), ("when", "2024-02-30T00:00:00Z"), ("when", "2024-01-01T00:00:00"),
            ("blob", "not base64!"), ("link", ""), ("id", "not-a-uuid"), ("amount", "12abc"),
        ]
        for (key, bad) in cases {
            let error = try #require(throws: DecodingError.self) {
                try decoder.decode(Typed.self, from: .dictionary([key: bad]))
            }
            guard case .dataCorrupted = error else {
                Issue.record("expected dataCorrupted for \(key) = \(bad), got \(error)")
                continue
            }
            #expect(path(of: error) == [key])
        }
    }

    // MARK: Leniencies

    @Test func unknownKeysAreIgnoredAndMissingOptionalsAreNil() throws {
        let item = try decoder.decode(Item.self, from: ["name": "a", "count": 2, "colour": "red"])
        #expect(item == Item(name: "a", count: 2, enabled: nil))
        let nulled = try decoder.decode(Item.self, from: ["name": "a", "count": 2, "enabled": .null])
        #expect(nulled.enabled == nil)
    }

    @Test func anIntegerIsAcceptedForARealField() throws {
        #expect(try decoder.decode(Double.self, from: 3) == 3.0)
        #expect(try decoder.decode(Float.self, from: .unsignedInteger(1 << 63)) == Float(UInt64(1) << 63))
        #expect(try decoder.decode([Double].self, from: [1, 2.5]) == [1, 2.5])
    }

    @Test func realsOutOfFloatRangeAreDataCorrupted() throws {
        #expect(throws: DecodingError.self) { try decoder.decode(Float.self, from: .real(1e300)) }
        #expect(try decoder.decode(Float.self, from: .real(.infinity)) == .infinity)
    }

    @Test func isoDateStringsAreAcceptedForDates() throws {
        let cases: [(String, Double)] = [
            ("2023-11-14T22:13:20Z", 1_700_000_000),
            ("2023-11-14T22:13:20.25Z", 1_700_000_000.25),
            ("2023-11-14t22:13:20,5z", 1_700_000_000.5),
            ("2023-11-14T23:13:20+01:00", 1_700_000_000),
            ("2023-11-14T17:13:20-0500", 1_700_000_000),
            ("1969-12-31T23:59:59.5Z", -0.5),
            ("1835-12-10T00:00:00Z", -4_230_576_000),
            ("2000-02-29T00:00:00Z", 951_782_400),
        ]
        for (string, seconds) in cases {
            let date = try decoder.decode(Date.self, from: .string(string))
            #expect(date.timeIntervalSince1970 == seconds, "\(string)")
        }
        let native = Date(timeIntervalSince1970: 12)
        #expect(try decoder.decode(Date.self, from: .date(native)) == native)
    }

    @Test func base64StringsAreAcceptedForData() throws {
        #expect(try decoder.decode(Data.self, from: "AAEC/w==") == Data([0, 1, 2, 255]))
        #expect(try decoder.decode(Data.self, from: .data([9])) == Data([9]))
    }

    @Test func byteArraysAcceptDataAndArrays() throws {
        #expect(try decoder.decode([UInt8].self, from: .data([1, 2, 3])) == [1, 2, 3])
        #expect(try decoder.decode([UInt8].self, from: [1, 2, 3]) == [1, 2, 3])
        #expect(throws: DecodingError.self) { try decoder.decode([UInt8].self, from: [256]) }
    }

    @Test func uuidsAreAcceptedInEitherCase() throws {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        #expect(try decoder.decode(UUID.self, from: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f") == uuid)
        #expect(try decoder.decode(UUID.self, from: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") == uuid)
    }

    @Test func decimalsAcceptStringsAndNumbers() throws {
        #expect(try decoder.decode(Decimal.self, from: "-12.50") == Decimal(string: "-12.5"))
        #expect(try decoder.decode(Decimal.self, from: 42) == Decimal(42))
        #expect(try decoder.decode(Decimal.self, from: 0.5) == Decimal(string: "0.5"))
    }
}
