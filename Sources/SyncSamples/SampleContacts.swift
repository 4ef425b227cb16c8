#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SyncCore

/// Realistic, deterministic address-book contacts: the same bytes on every
/// run and every machine, without the network. Benchmarks, the codec size
/// report and the docs measure codecs on them.
///
/// ```swift
/// let contacts = SampleContacts(seed: 1).make(count: 1_000, photos: true)
/// let message = SampleContacts.standardMessage()     // the "message" shape
/// let records = SampleContacts.standardRecords()     // the "records" shape
/// ```
///
/// A contact has a lowercase UUID, first and last name, a company, one to
/// three e-mail addresses and phone numbers with labels, a postal address, a
/// birthday, notes of 0–400 characters and a modification date (dates in
/// whole seconds, which every codec carries). With photos, one contact in ten
/// carries a 20–60 KB photo of incompressible bytes, as a JPEG would be.
public struct SampleContacts: Sendable {
    /// The seed every contact derives from.
    public let seed: UInt64

    /// Makes a generator.
    public init(seed: UInt64 = 2_024) {
        self.seed = seed
    }

    /// `count` contacts as values.
    public func make(count: Int, photos: Bool) -> [SyncValue] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { _ in contact(photos: photos, using: &random) }
    }

    /// The **message** shape: an OTA `sync-changes` message carrying 1,000 contacts with photos.
    public static func standardMessage(seed: UInt64 = 2_024) -> SyncValue {
        let contacts = SampleContacts(seed: seed).make(count: 1_000, photos: true)
        var items: [String: SyncValue] = [:]
        for contact in contacts {
            guard case .string(let uuid)? = contact["uuid"] else { continue }
            items[uuid] = ["op": "add", "entity": "com.apple.contacts.Contact", "record": contact]
        }
        let header: SyncValue = [
            "version": "1.0", "service": "sync", "userid": "ada", "deviceid": "8d3f1c2a-5b6e-4f70-9a81-b2c3d4e5f607",
            "sequence": 1, "final": true,
        ]
        let command: SyncValue = [
            "name": "sync-changes", "sequence": 2,
            "params": ["uri": "com.apple.Contacts", "itemtype": "records", "items": .dictionary(items)],
        ]
        return ["header": header, "body": [command]]
    }

    /// The **records** shape: 10,000 contacts without photos, in an array.
    public static func standardRecords(seed: UInt64 = 2_024) -> SyncValue {
        .array(SampleContacts(seed: seed).make(count: 10_000, photos: false))
    }

    private func contact(photos: Bool, using random: inout SeededGenerator) -> SyncValue {
        let first = Self.firstNames.randomElement(using: &random)!
        let last = Self.lastNames.randomElement(using: &random)!
        let domain = Self.domains.randomElement(using: &random)!
        var fields: [String: SyncValue] = [
            "uuid": .string(Self.uuid(using: &random)),
            "firstName": .string(first),
            "lastName": .string(last),
            "company": .string(Self.companies.randomElement(using: &random)!),
            "emails": .array(
                (0..<Int.random(in: 1...3, using: &random)).map { index in
                    [
                        "label": .string(["home", "work", "other"][index]),
                        "address": .string("\(first.lowercased()).\(last.lowercased())\(index == 0 ? "" : String(index))@\(domain)"),
                    ]
                }),
            "phones": .array(
                (0..<Int.random(in: 1...3, using: &random)).map { index in
                    [
                        "label": .string(["mobile", "home", "work"][index]),
                        "number": .string("+1 \(Int.random(in: 200...999, using: &random)) 555 \(Int.random(in: 1000...9999, using: &random))"),
                    ]
                }),
            "address": [
                "street": .string("\(Int.random(in: 1...9999, using: &random)) \(Self.streets.randomElement(using: &random)!)"),
                "city": .string(Self.cities.randomElement(using: &random)!),
                "postalCode": .string(String(Int.random(in: 10000...99999, using: &random))),
                "country": "US",
            ],
            "birthday": .date(Date(timeIntervalSince1970: Double(Int.random(in: -1_500_000_000...1_100_000_000, using: &random) / 86_400 * 86_400))),
            "notes": .string(Self.notes(length: Int.random(in: 0...400, using: &random), using: &random)),
            "modified": .date(Date(timeIntervalSince1970: Double(Int.random(in: 1_600_000_000...1_760_000_000, using: &random)))),
        ]
        if photos, Int.random(in: 0..<10, using: &random) == 0 {
            let size = Int.random(in: 20_000...60_000, using: &random)
            var photo = [UInt8](repeating: 0, count: size)
            var index = 0
            while index < size {
                var word = random.next()
                for _ in 0..<8 where index < size {
                    photo[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
            fields["photo"] = .data(photo)
        }
        return .dictionary(fields)
    }

    private static func uuid(using random: inout SeededGenerator) -> String {
        let high = random.next()
        let low = random.next()
        let hex = String(high, radix: 16).leftPadded(to: 16) + String(low, radix: 16).leftPadded(to: 16)
        let digits = Array(hex)
        return String(digits[0..<8]) + "-" + String(digits[8..<12]) + "-4" + String(digits[13..<16]) + "-a"
            + String(digits[17..<20]) + "-" + String(digits[20..<32])
    }

    private static func notes(length: Int, using random: inout SeededGenerator) -> String {
        var text = ""
        while text.count < length {
            if !text.isEmpty { text += " " }
            text += words.randomElement(using: &random)!
        }
        return String(text.prefix(length))
    }

    private static let firstNames = [
        "Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "John", "Margaret", "Dennis", "Radia",
        "Ken", "Hedy", "Tim", "Karen", "Niklaus", "Shafi", "Leslie", "Sophie", "Zoë", "José", "Chloé", "Søren",
    ]
    private static let lastNames = [
        "Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "McCarthy", "Hamilton", "Ritchie",
        "Perlman", "Thompson", "Lamarr", "Berners-Lee", "Spärck Jones", "Wirth", "Goldwasser", "Lamport", "Wilson",
    ]
    private static let companies = [
        "Analytical Engines Ltd", "Bletchley Park", "Harvard Mark I", "Mathematisch Centrum", "Bell Labs",
        "Xerox PARC", "Digital Equipment", "CERN", "Acme Widgets", "Initech", "Globex", "Umbrella Corp",
    ]
    private static let domains = ["example.com", "example.org", "mail.example.net", "corp.example"]
    private static let streets = ["Main Street", "Oak Avenue", "Elm Road", "Harbor Way", "Pine Lane", "Cedar Court"]
    private static let cities = ["Springfield", "Riverside", "Fairview", "Georgetown", "Anchorage", "Portsmouth"]
    private static let words = [
        "met", "at", "the", "conference", "call", "back", "about", "the", "proposal", "prefers", "email",
        "birthday", "gift", "ideas", "coffee", "on", "Tuesday", "project", "lead", "sync", "notes", "follow", "up",
        "☕️", "naïve", "café", "résumé", "über",
    ]
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
