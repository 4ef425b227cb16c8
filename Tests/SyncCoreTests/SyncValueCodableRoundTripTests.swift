import FoundationEssentials
import SyncCore
import Testing

@Suite("Codable bridge: round trips and mapping")
struct SyncValueCodableRoundTripTests {
    let encoder = SyncValueEncoder()
    let decoder = SyncValueDecoder()

    @Test func messageWithEveryKindRoundTrips() throws {
        let value = try encoder.encode(ContactMessage.sample)
        let decoded = try decoder.decode(ContactMessage.self, from: value)
        #expect(decoded == ContactMessage.sample)
    }

    @Test func typesMapToTheirSyncValueCases() throws {
        let value = try encoder.encode(ContactMessage.sample)
        #expect(value["id"] == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        #expect(value["kind"] == "person")
        #expect(value["priority"] == .integer(2))
        #expect(value["born"] == .date(Date(timeIntervalSince1970: -4_777_545_600)))
        #expect(value["photo"] == .data([0, 1, 2, 254, 255]))
        #expect(value["checksum"] == [7, 8, 9])
        #expect(value["largest"] == .unsignedInteger(.max))
        #expect(value["smallest"] == .integer(.min))
        #expect(value["website"] == "https://example.org/ada?lang=en")
        #expect(value["balance"] == "1234.5678")
        #expect(value["ratio"]?.realValue == Double(Float(0.1)))
        #expect(value["scores"] == ["maths": 9.5, "poetry": 7.0])
        #expect(value["countsByYear"] == ["1843": 1, "1852": 2])
        #expect(value["sparse"] == [1, nil, 3])
        #expect(value["address"] == ["street": "12 St James's Square", "city": "London", "postcode": "SW1Y 4JH"])
        #expect(value["previousAddresses"]?.arrayValue?.first == ["street": "Ockham Park", "city": "Ockham"])
        #expect(value["extra"] == ["note": "engine", "when": .date(Date(timeIntervalSince1970: 0)), "nothing": .null])
    }

    @Test func nilOptionalsLeaveTheirKeyOutByDefault() throws {
        let value = try encoder.encode(ContactMessage.sample)
        #expect(value.dictionaryValue?.keys.contains("nickname") == false)
    }

    @Test func nullStrategyWritesNullForNilOptionals() throws {
        let value = try SyncValueEncoder(nilEncodingStrategy: .null).encode(ContactMessage.sample)
        #expect(value["nickname"] == .null)
        #expect(value["previousAddresses"]?.arrayValue?.first?["postcode"] == .null)
        #expect(try decoder.decode(ContactMessage.self, from: value) == ContactMessage.sample)
    }

    @Test func unsignedIntegersAboveInt64MaxUseTheUnsignedCase() throws {
        #expect(try encoder.encode(UInt64(Int64.max)) == .integer(.max))
        #expect(try encoder.encode(UInt64(Int64.max) + 1) == .unsignedInteger(UInt64(Int64.max) + 1))
        #expect(try encoder.encode(UInt.max) == .unsignedInteger(UInt64(UInt.max)))
        #expect(try decoder.decode(UInt64.self, from: .unsignedInteger(.max)) == .max)
        #expect(try decoder.decode(Int64.self, from: .integer(.min)) == .min)
    }

    @Test func integerWidthsRoundTrip() throws {
        struct Widths: Codable, Equatable {
            var int8: Int8, int16: Int16, int32: Int32, int: Int
            var uint8: UInt8, uint16: UInt16, uint32: UInt32, uint: UInt
            var wide: Int128, wideUnsigned: UInt128
        }
        let widths = Widths(
            int8: .min, int16: .min, int32: .min, int: .min, uint8: .max, uint16: .max, uint32: .max, uint: .max,
            wide: Int128(Int64.min), wideUnsigned: UInt128(UInt64.max))
        let value = try encoder.encode(widths)
        #expect(value["wideUnsigned"] == .unsignedInteger(.max))
        #expect(try decoder.decode(Widths.self, from: value) == widths)
    }

    @Test func enumsWithAssociatedValuesRoundTripThroughNestedContainers() throws {
        let shapes: [Shape] = [.circle(radius: 2), .rectangle(width: 3, height: 4.5), .point]
        let value = try encoder.encode(shapes)
        #expect(value.arrayValue?.first == ["circle": ["radius": 2.0]])
        #expect(try decoder.decode([Shape].self, from: value) == shapes)
    }

    @Test func superEncodersAndHandWrittenContainersRoundTrip() throws {
        let layered = Layered(
            base: .rectangle(width: 1, height: 2), tag: "door", corners: [4, 3, 2], labels: ["primary": "front"])
        let value = try encoder.encode(layered)
        #expect(value["super"] == ["rectangle": ["width": 1.0, "height": 2.0]])
        #expect(value["geometry"] == "door")
        #expect(value["corners"] == [4, 3, 2])
        #expect(value["labels"] == ["primary": "front"])
        #expect(try decoder.decode(Layered.self, from: value) == layered)
    }

    @Test func topLevelScalarsArraysAndDictionariesRoundTrip() throws {
        #expect(try encoder.encode("plain") == "plain")
        #expect(try encoder.encode(true) == true)
        #expect(try encoder.encode(Optional<Int>.none) == .null)
        let nested: [String: [[String: Int]]] = ["a": [["x": 1]], "b": []]
        #expect(try decoder.decode([String: [[String: Int]]].self, from: encoder.encode(nested)) == nested)
        let uuids = [UUID(), UUID()]
        #expect(try decoder.decode([UUID].self, from: encoder.encode(uuids)) == uuids)
    }

    @Test func syncValuesPassThroughUnchanged() throws {
        let free: SyncValue = ["n": .unsignedInteger(.max), "d": .data([1]), "t": .date(Date(timeIntervalSince1970: 5))]
        #expect(try encoder.encode(free) == free)
        #expect(try decoder.decode(SyncValue.self, from: free) == free)
    }

    @Test func aValueThatEncodesNothingIsAnError() throws {
        struct Silent: Encodable { func encode(to encoder: any Encoder) throws {} }
        #expect(throws: EncodingError.self) { try encoder.encode(Silent()) }
        // Nested, it encodes as an empty dictionary, as Foundation's encoders do.
        #expect(try encoder.encode([Silent()]) == [[:]])
    }

    @Test func integersWiderThan64BitsAreAnErrorWithTheirPath() throws {
        struct Huge: Encodable { var values: [Int128] }
        #expect {
            try encoder.encode(Huge(values: [1, Int128(UInt64.max) + 1]))
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["values", "Index 1"]
        }
    }

    @Test func userInfoReachesTheValues() throws {
        let key = CodingUserInfoKey(rawValue: "prefix")!
        struct Prefixed: Codable, Equatable {
            var name: String
            init(name: String) { self.name = name }
            init(from decoder: any Decoder) throws {
                let prefix = decoder.userInfo[CodingUserInfoKey(rawValue: "prefix")!] as? String ?? ""
                name = prefix + (try decoder.singleValueContainer().decode(String.self))
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                let prefix = encoder.userInfo[CodingUserInfoKey(rawValue: "prefix")!] as? String ?? ""
                try container.encode(prefix + name)
            }
        }
        let value = try SyncValueEncoder(userInfo: [key: "en:"]).encode(Prefixed(name: "a"))
        #expect(value == "en:a")
        #expect(try SyncValueDecoder(userInfo: [key: ">"]).decode(Prefixed.self, from: value) == Prefixed(name: ">en:a"))
    }
}
