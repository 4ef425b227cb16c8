import Aquasync
import ArgumentParser
import Foundation
import SyncCore

/// `anchorage records`: reads and edits a device's records without the network.
struct Records: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read and edit a device's records; `anchorage sync` sends the edits.",
        subcommands: [Save.self, Delete.self, List.self]
    )

    struct Device: ParsableArguments {
        @Option(help: "The device's local store: sqlite:PATH, postgres://USER@HOST:PORT/DATABASE or memory.")
        var store = StoreOption(argument: "sqlite:anchorage-device.sqlite")!

        /// Runs `body` with the device's records.
        func withRecords<Result: Sendable>(_ body: (AquasyncLocalRecords) async throws -> Result) async throws -> Result {
            try await store.withStore { store in try await body(AquasyncLocalRecords(store: store)) }
        }
    }

    struct Save: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or replace a record: anchorage records save Contact name=Ada age=36")

        @Argument(help: "The model, such as Contact.")
        var model: String

        @Argument(help: "Fields as name=value; integers, reals, true and false are typed, the rest is text.")
        var fields: [String] = []

        @Option(help: "The record's gid; a new one when omitted.")
        var gid: String?

        @OptionGroup var device: Device

        func run() async throws {
            var values: [String: SyncValue] = [:]
            for field in fields {
                guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
                    throw ValidationError("'\(field)' is not name=value")
                }
                values[String(field[..<equals])] = Self.value(String(field[field.index(after: equals)...]))
            }
            let (model, gid, fieldValues) = (model, gid, values)
            let saved = try await device.withRecords { try await $0.save(model, gid: gid, fields: fieldValues) }
            print(saved)
        }

        static func value(_ text: String) -> SyncValue {
            if let integer = Int64(text) { return .integer(integer) }
            if let real = Double(text), text.contains(".") { return .real(real) }
            if text == "true" || text == "false" { return .bool(text == "true") }
            return .string(text)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Soft-delete a record.")

        @Argument(help: "The model.")
        var model: String

        @Argument(help: "The record's gid.")
        var gid: String

        @OptionGroup var device: Device

        func run() async throws {
            try await device.withRecords { try await $0.delete(model, gid: gid) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a model's records, one JSON line each.")

        @Argument(help: "The model.")
        var model: String

        @OptionGroup var device: Device

        func run() async throws {
            for object in try await device.withRecords({ try await $0.objects(model) }) {
                let line: SyncValue = [
                    "gid": .string(object.gid), "dirty": .bool(object.isDirty), "fields": .dictionary(object.fields),
                ]
                print(String(decoding: try CodecChoice.json.codec.encode(line), as: UTF8.self))
            }
        }
    }
}
