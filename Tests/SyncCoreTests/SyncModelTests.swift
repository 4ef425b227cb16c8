import Foundation
import SyncCore
import Testing

/// The rules by which a `SyncModel` becomes a record's fields and back (`ModelFields`).
@Suite("typed models: a Codable type as a record's fields")
struct SyncModelTests {
    enum Kind: String, Codable { case person, company }

    struct Address: Codable, Hashable {
        var street: String
        var zip: String?
    }

    struct Contact: SyncModel, Hashable {
        static let modelName = "Contact"
        var id: String
        var name: String
        var born: Date?
        var photo: Data?
        var emails: [String] = []
        var address: Address?
        var kind: Kind = .person
        var score: Double?
    }

    /// What an older version of the app knows of a contact.
    struct OldContact: SyncModel, Hashable {
        static let modelName = "Contact"
        var id: String
        var name: String
    }

    let id = "0191e0c2-7f00-7000-8000-000000000001"

    @Test("every kind of property becomes its field; id is the record's id, not a field")
    func fieldsOfEveryKind() throws {
        let contact = Contact(
            id: id, name: "Ada", born: Date(timeIntervalSince1970: -4_857_494_400), photo: Data([1, 2, 3]),
            emails: ["ada@example.org"], address: Address(street: "St James's Square", zip: nil), kind: .company, score: 1.5)
        let fields = try ModelFields.fields(of: contact, over: nil)
        #expect(fields == [
            "name": "Ada", "born": .date(Date(timeIntervalSince1970: -4_857_494_400)), "photo": .data([1, 2, 3]),
            "emails": ["ada@example.org"], "address": ["street": "St James's Square"], "kind": "company", "score": 1.5,
        ])
        #expect(try ModelFields.model(Contact.self, id: id, fields: fields) == contact)
    }

    @Test("a nil optional removes the field; an absent field and a stored null both read as nil")
    func optionals() throws {
        let stored: [String: SyncValue] = ["name": "Ada", "born": .date(Date(timeIntervalSince1970: 0)), "score": 2]
        let cleared = try ModelFields.fields(of: Contact(id: id, name: "Ada"), over: stored)
        #expect(cleared["born"] == nil && cleared["score"] == nil)
        #expect(cleared["name"] == "Ada")
        let fromNull = try ModelFields.model(Contact.self, id: id, fields: ["name": "Ada", "born": .null, "emails": [], "kind": "person"])
        #expect(fromNull.born == nil)
        let fromAbsent = try ModelFields.model(Contact.self, id: id, fields: ["name": "Ada", "emails": [], "kind": "person"])
        #expect(fromAbsent.born == nil && fromAbsent.address == nil)
    }

    @Test("fields the type does not know survive a read-modify-save")
    func unknownFieldsSurvive() throws {
        // A newer app wrote a nickname and an address; the older one knows only the name.
        let newer = Contact(id: id, name: "Ada", emails: ["ada@example.org"], address: Address(street: "Marylebone", zip: "W1"))
        let stored = try ModelFields.fields(of: newer, over: nil).merging(["nickname": "Enchantress of Numbers"]) { $1 }
        var old = try ModelFields.model(OldContact.self, id: id, fields: stored)
        old.name = "Ada Lovelace"
        let saved = try ModelFields.fields(of: old, over: stored)
        #expect(saved["name"] == "Ada Lovelace")
        #expect(saved["nickname"] == "Enchantress of Numbers")
        #expect(saved["address"] == ["street": "Marylebone", "zip": "W1"])
        let reread = try ModelFields.model(Contact.self, id: id, fields: saved)
        #expect(reread.emails == ["ada@example.org"] && reread.address?.zip == "W1" && reread.name == "Ada Lovelace")
    }

    @Test("a value the type cannot read is an error naming the record and the field")
    func unreadableValues() throws {
        let wrongType = #expect(throws: ModelDecodingError.self) {
            try ModelFields.model(Contact.self, id: id, fields: ["name": "Ada", "emails": ["a", 2]])
        }
        #expect(wrongType?.field == "emails[1]")
        #expect(wrongType?.id == id && wrongType?.model == "Contact")
        #expect(wrongType?.description.contains("field \"emails[1]\"") == true)
        let missing = #expect(throws: ModelDecodingError.self) {
            try ModelFields.model(Contact.self, id: id, fields: ["emails": [], "kind": "person"])
        }
        #expect(missing?.field == "name")
        let badEnum = #expect(throws: ModelDecodingError.self) {
            try ModelFields.model(Contact.self, id: id, fields: ["name": "Ada", "emails": [], "kind": "robot"])
        }
        #expect(badEnum?.field == "kind")
    }

    @Test("a nil inside a nested value leaves its key out there too")
    func nestedNils() throws {
        let fields = try ModelFields.fields(of: Contact(id: id, name: "Ada", address: Address(street: "Strand", zip: nil)), over: nil)
        #expect(fields["address"] == ["street": "Strand"])
    }
}
