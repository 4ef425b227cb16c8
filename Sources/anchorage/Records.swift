import Aquasync
import ArgumentParser
import Foundation
import OTASync
import SyncCore

/// `anchorage records`: reads and edits a device's records without the network.
struct Records: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read and edit a device's records; `anchorage sync` sends the edits.",
        discussion: """
            Aquasync records (the default) are named by model and gid. With --stack ota the
            records are those `anchorage sync --stack ota` syncs: named by LUID, in the dataclass
            --dataclass (com.apple.Contacts by default), of the account --user (by default the one
            this store was last used with):

              anchorage records save --stack ota --user ada com.apple.contacts.Contact "first name=Ada"
              anchorage records list --stack ota
              anchorage records delete --stack ota LUID
            """,
        subcommands: [Save.self, Delete.self, List.self]
    )

    /// The kinds of records the command edits.
    enum Stack: String, ExpressibleByArgument, CaseIterable {
        case aquasync
        case ota
    }

    struct Device: ParsableArguments {
        @Option(help: "The device's local store: sqlite:PATH, postgres://USER@HOST:PORT/DATABASE or memory.")
        var store = StoreOption(argument: "sqlite:anchorage-device.sqlite")!

        @Option(help: "Whose records: Aquasync's or OTA's.")
        var stack: Stack = .aquasync

        @Option(help: "OTA: the dataclass (default com.apple.Contacts).")
        var dataclass: String?

        @Option(help: "OTA: the account the records belong to (default: the one this store was last used with).")
        var user: String?

        /// Refuses the OTA options without `--stack ota`.
        func validate() throws {
            guard stack != .ota else { return }
            if dataclass != nil { throw ValidationError("--dataclass goes with --stack ota") }
            if user != nil { throw ValidationError("--user goes with --stack ota") }
        }

        /// Runs `body` with the device's records.
        func withRecords<Result: Sendable>(_ body: (AquasyncLocalRecords) async throws -> Result) async throws -> Result {
            try await store.withStore { store in try await body(AquasyncLocalRecords(store: store)) }
        }

        /// Runs `body` with the device's OTA records and the dataclass to work on.
        func withOTARecords<Result: Sendable>(_ body: (OTADeviceRecords, String) async throws -> Result) async throws -> Result {
            try await store.withStore { store in
                let account = try await OTADeviceSettings.account(user, in: store)
                return try await body(OTADeviceRecords(store: store, account: account), dataclass ?? OTADefaults.dataclass)
            }
        }
    }

    struct Save: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or replace a record: anchorage records save Contact name=Ada age=36",
            discussion: """
                With --stack ota the first argument is the entity and the record's LUID is printed:
                anchorage records save --stack ota com.apple.contacts.Contact "first name=Ada"
                """)

        @Argument(help: "The model, such as Contact; with --stack ota the entity, such as com.apple.contacts.Contact.")
        var model: String

        @Argument(help: "Fields as name=value; integers, reals, true and false are typed, the rest is text.")
        var fields: [String] = []

        @Option(help: "Aquasync: the record's gid; a new one when omitted.")
        var gid: String?

        @Option(help: "OTA: the LUID of the record to replace; a new record when omitted.")
        var luid: String?

        @OptionGroup var device: Device

        /// Refuses an id option of the other stack.
        func validate() throws {
            if device.stack == .ota, gid != nil { throw ValidationError("--gid is for Aquasync; OTA records take --luid") }
            if device.stack == .aquasync, luid != nil { throw ValidationError("--luid goes with --stack ota") }
        }

        func run() async throws {
            let values = try Self.values(fields)
            let (model, gid, luid) = (model, gid, luid)
            let saved: String
            switch device.stack {
            case .aquasync:
                saved = try await device.withRecords { try await $0.save(model, gid: gid, fields: values) }
            case .ota:
                saved = try await device.withOTARecords { records, dataclass in
                    try await records.save(dataclass: dataclass, luid: luid, entity: model, fields: values)
                }
            }
            print(saved)
        }

        /// Reads `name=value` arguments into fields, typing each value with ``value(_:)``.
        /// - Throws: `ValidationError` for an argument without a name and `=`.
        static func values(_ fields: [String]) throws -> [String: SyncValue] {
            var values: [String: SyncValue] = [:]
            for field in fields {
                guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
                    throw ValidationError("'\(field)' is not name=value")
                }
                values[String(field[..<equals])] = Self.value(String(field[field.index(after: equals)...]))
            }
            return values
        }

        static func value(_ text: String) -> SyncValue {
            if let integer = Int64(text) { return .integer(integer) }
            if let real = Double(text), text.contains(".") { return .real(real) }
            if text == "true" || text == "false" { return .bool(text == "true") }
            return .string(text)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Soft-delete a record: anchorage records delete MODEL GID, or delete --stack ota LUID.")

        @Argument(help: "The model; with --stack ota the record's LUID.")
        var model: String

        @Argument(help: "Aquasync: the record's gid.")
        var gid: String?

        @OptionGroup var device: Device

        /// Checks that the arguments fit the stack: MODEL GID, or one LUID.
        func validate() throws {
            switch device.stack {
            case .aquasync: if gid == nil { throw ValidationError("name the record: anchorage records delete MODEL GID") }
            case .ota: if gid != nil { throw ValidationError("with --stack ota, name the record by its LUID alone") }
            }
        }

        func run() async throws {
            switch device.stack {
            case .aquasync:
                let (model, gid) = (model, gid ?? "")
                try await device.withRecords { try await $0.delete(model, gid: gid) }
            case .ota:
                let luid = model
                let found = try await device.withOTARecords { records, dataclass in
                    guard try await records.records(dataclass: dataclass)[luid] != nil else { return false }
                    try await records.delete(dataclass: dataclass, luid: luid)
                    return true
                }
                guard found else {
                    throw failure("no record \(luid) in \(device.dataclass ?? OTADefaults.dataclass)", code: 67)
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a model's records (or, with --stack ota, a dataclass's), one JSON line each.",
            discussion: """
                An OTA line has the record's luid, entity and fields, and, while a conflict waits
                for the user, the device's version that lost as conflict.
                """)

        @Argument(help: "The model; not with --stack ota, which lists --dataclass.")
        var model: String?

        @OptionGroup var device: Device

        /// Checks that a model is named for Aquasync and not for OTA.
        func validate() throws {
            switch device.stack {
            case .aquasync: if model == nil { throw ValidationError("name the model: anchorage records list MODEL") }
            case .ota: if model != nil { throw ValidationError("with --stack ota, name the dataclass with --dataclass") }
            }
        }

        func run() async throws {
            switch device.stack {
            case .aquasync:
                let model = model ?? ""
                for object in try await device.withRecords({ try await $0.objects(model) }) {
                    let line: SyncValue = [
                        "gid": .string(object.gid), "dirty": .bool(object.isDirty), "fields": .dictionary(object.fields),
                    ]
                    print(String(decoding: try CodecChoice.json.codec.encode(line), as: UTF8.self))
                }
            case .ota:
                let (records, conflicts) = try await device.withOTARecords { records, dataclass in
                    (try await records.records(dataclass: dataclass), try await records.conflicts(dataclass: dataclass))
                }
                for (luid, record) in records.sorted(by: { $0.key < $1.key }) {
                    var line: [String: SyncValue] = [
                        "luid": .string(luid), "entity": .string(record.entity), "fields": .dictionary(record.fields),
                    ]
                    if let conflict = conflicts[luid] { line["conflict"] = .dictionary(conflict) }
                    print(String(decoding: try CodecChoice.json.codec.encode(.dictionary(line)), as: UTF8.self))
                }
            }
        }
    }
}
