import FoundationEssentials
import SyncCore

/// A message with a field of every kind the Codable bridge maps.
struct ContactMessage: Codable, Equatable {
    enum Kind: String, Codable { case person, company }
    enum Priority: Int, Codable { case low = 1, high = 2 }

    struct Address: Codable, Equatable {
        var street: String
        var city: String
        var postcode: String?
    }

    var id: UUID
    var name: String
    var kind: Kind
    var priority: Priority
    var address: Address
    var previousAddresses: [Address]
    var nickname: String?
    var scores: [String: Double]
    var countsByYear: [Int: Int]
    var born: Date
    var photo: Data
    var checksum: [UInt8]
    var largest: UInt64
    var smallest: Int64
    var ratio: Float
    var website: URL
    var balance: Decimal
    var grid: [[Int]]
    var sparse: [Int?]
    var extra: [String: SyncValue]

    static let sample = ContactMessage(
        id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        name: "Ada Lovelace",
        kind: .person,
        priority: .high,
        address: Address(street: "12 St James's Square", city: "London", postcode: "SW1Y 4JH"),
        previousAddresses: [
            Address(street: "Ockham Park", city: "Ockham", postcode: nil),
            Address(street: "Horsley Towers", city: "East Horsley", postcode: "KT24"),
        ],
        nickname: nil,
        scores: ["maths": 9.5, "poetry": 7],
        countsByYear: [1843: 1, 1852: 2],
        born: Date(timeIntervalSince1970: -4_777_545_600),
        photo: Data([0, 1, 2, 254, 255]),
        checksum: [7, 8, 9],
        largest: .max,
        smallest: .min,
        ratio: 0.1,
        website: URL(string: "https://example.org/ada?lang=en")!,
        balance: Decimal(string: "1234.5678")!,
        grid: [[1, 2], [], [3]],
        sparse: [1, nil, 3],
        extra: ["note": "engine", "when": .date(Date(timeIntervalSince1970: 0)), "nothing": .null])
}

/// An enum with associated values: synthesized Codable uses nested keyed containers.
enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case rectangle(width: Double, height: Double)
    case point
}

/// A value whose coding uses `superEncoder`, nested containers and unkeyed containers by hand.
struct Layered: Codable, Equatable {
    var base: Shape
    var tag: String
    var corners: [Int]
    var labels: [String: String]

    private enum CodingKeys: String, CodingKey { case tag, geometry, corners, labels }
    private enum LabelKeys: String, CodingKey { case primary, secondary }

    init(base: Shape, tag: String, corners: [Int], labels: [String: String]) {
        self.base = base
        self.tag = tag
        self.corners = corners
        self.labels = labels
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tag, forKey: .tag)
        try base.encode(to: container.superEncoder())
        try tag.encode(to: container.superEncoder(forKey: .geometry))
        var corners = container.nestedUnkeyedContainer(forKey: .corners)
        for corner in self.corners { try corners.encode(corner) }
        var labels = container.nestedContainer(keyedBy: LabelKeys.self, forKey: .labels)
        try labels.encodeIfPresent(self.labels["primary"], forKey: .primary)
        try labels.encodeIfPresent(self.labels["secondary"], forKey: .secondary)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tag = try container.decode(String.self, forKey: .tag)
        base = try Shape(from: container.superDecoder())
        let geometryTag = try String(from: container.superDecoder(forKey: .geometry))
        guard geometryTag == tag else {
            throw DecodingError.dataCorruptedError(forKey: .geometry, in: container, debugDescription: "tag mismatch")
        }
        var cornerList = try container.nestedUnkeyedContainer(forKey: .corners)
        var corners: [Int] = []
        while !cornerList.isAtEnd { corners.append(try cornerList.decode(Int.self)) }
        self.corners = corners
        let labels = try container.nestedContainer(keyedBy: LabelKeys.self, forKey: .labels)
        var labelValues: [String: String] = [:]
        labelValues["primary"] = try labels.decodeIfPresent(String.self, forKey: .primary)
        labelValues["secondary"] = try labels.decodeIfPresent(String.self, forKey: .secondary)
        self.labels = labelValues
    }
}
