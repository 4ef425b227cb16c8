import Foundation
import SyncCore

/// A contact as an app would model it with `Codable`: what `PropertyListEncoder`
/// and `JSONEncoder` encode in the peer benchmarks.
struct Contact: Codable, Equatable {
    var uuid: String
    var firstName: String
    var lastName: String
    var company: String
    var emails: [LabeledEmail]
    var phones: [LabeledPhone]
    var address: PostalAddress
    var birthday: Date
    var notes: String
    var modified: Date
    var photo: Data?
}

/// One e-mail address of a ``Contact``.
struct LabeledEmail: Codable, Equatable {
    var label: String
    var address: String
}

/// One phone number of a ``Contact``.
struct LabeledPhone: Codable, Equatable {
    var label: String
    var number: String
}

/// The postal address of a ``Contact``.
struct PostalAddress: Codable, Equatable {
    var street: String
    var city: String
    var postalCode: String
    var country: String
}

/// The OTA `sync-changes` message envelope around contacts.
struct SyncChangesMessage: Codable, Equatable {
    var header: Header
    var body: [Command]

    /// Who sends the message.
    struct Header: Codable, Equatable {
        var version: String
        var service: String
        var userid: String
        var deviceid: String
        var sequence: Int
        var final: Bool
    }

    /// One command of the body.
    struct Command: Codable, Equatable {
        var name: String
        var sequence: Int
        var params: Parameters
    }

    /// The parameters of a `sync-changes` command.
    struct Parameters: Codable, Equatable {
        var uri: String
        var itemtype: String
        var items: [String: Item]
    }

    /// One changed record.
    struct Item: Codable, Equatable {
        var op: String
        var entity: String
        var record: Contact
    }
}

/// A shape that is not what the standard samples make.
struct ShapeMismatch: Error, CustomStringConvertible {
    var description: String
}

// MARK: - From the sample values

extension Contact {
    init(_ value: SyncValue) throws {
        let fields = try value.fields()
        uuid = try fields.string("uuid")
        firstName = try fields.string("firstName")
        lastName = try fields.string("lastName")
        company = try fields.string("company")
        emails = try fields.array("emails").map { email in
            let fields = try email.fields()
            return LabeledEmail(label: try fields.string("label"), address: try fields.string("address"))
        }
        phones = try fields.array("phones").map { phone in
            let fields = try phone.fields()
            return LabeledPhone(label: try fields.string("label"), number: try fields.string("number"))
        }
        let address = try fields.value("address").fields()
        self.address = PostalAddress(
            street: try address.string("street"), city: try address.string("city"),
            postalCode: try address.string("postalCode"), country: try address.string("country"))
        birthday = try fields.date("birthday")
        notes = try fields.string("notes")
        modified = try fields.date("modified")
        if case .data(let bytes)? = fields["photo"] { photo = Data(bytes) } else { photo = nil }
    }
}

extension SyncChangesMessage {
    init(_ value: SyncValue) throws {
        let fields = try value.fields()
        let header = try fields.value("header").fields()
        self.header = Header(
            version: try header.string("version"), service: try header.string("service"),
            userid: try header.string("userid"), deviceid: try header.string("deviceid"),
            sequence: try header.integer("sequence"), final: try header.bool("final"))
        body = try fields.array("body").map { command in
            let fields = try command.fields()
            let params = try fields.value("params").fields()
            guard case .dictionary(let items) = try params.value("items") else { throw ShapeMismatch(description: "items") }
            return Command(
                name: try fields.string("name"), sequence: try fields.integer("sequence"),
                params: Parameters(
                    uri: try params.string("uri"), itemtype: try params.string("itemtype"),
                    items: try items.mapValues { item in
                        let fields = try item.fields()
                        return Item(
                            op: try fields.string("op"), entity: try fields.string("entity"),
                            record: try Contact(fields.value("record")))
                    }))
        }
    }
}

extension SyncValue {
    fileprivate func fields() throws -> [String: SyncValue] {
        guard case .dictionary(let fields) = self else { throw ShapeMismatch(description: "expected a dictionary") }
        return fields
    }
}

extension [String: SyncValue] {
    fileprivate func value(_ key: String) throws -> SyncValue {
        guard let value = self[key] else { throw ShapeMismatch(description: "missing \(key)") }
        return value
    }
    fileprivate func string(_ key: String) throws -> String {
        guard case .string(let string) = try value(key) else { throw ShapeMismatch(description: "\(key): not a string") }
        return string
    }
    fileprivate func integer(_ key: String) throws -> Int {
        guard case .integer(let integer) = try value(key) else { throw ShapeMismatch(description: "\(key): not an integer") }
        return Int(integer)
    }
    fileprivate func bool(_ key: String) throws -> Bool {
        guard case .bool(let bool) = try value(key) else { throw ShapeMismatch(description: "\(key): not a Boolean") }
        return bool
    }
    fileprivate func date(_ key: String) throws -> Date {
        guard case .date(let date) = try value(key) else { throw ShapeMismatch(description: "\(key): not a date") }
        return date
    }
    fileprivate func array(_ key: String) throws -> [SyncValue] {
        guard case .array(let array) = try value(key) else { throw ShapeMismatch(description: "\(key): not an array") }
        return array
    }
}
