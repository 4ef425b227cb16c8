import AppSync
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
            Aquasync records (the default) are named by model and gid. With --stack
            appsync they are the objects `anchorage sync --stack appsync` syncs, named
            by type and guid; give the type as sync's --appsync-type takes it (NAME,
            or NAME:FIELD+FIELD to name its primary key). With --stack ota they are
            those `anchorage sync --stack ota` syncs: named by LUID, in the dataclass
            --dataclass (com.apple.Contacts by default), of the account --user (by
            default the one this store was last used with):

              anchorage records save Contact name=Ada born:int=1815 zip=02134
              anchorage records save --stack appsync booking pk=101 guest=Ada
              anchorage records save --stack ota --user ada com.apple.contacts.Contact "first name=Ada"
              anchorage records list --stack ota
              anchorage records delete --stack ota LUID
              anchorage records import Contact contacts.jsonl
              anchorage records export Contact contacts.json

            A field is NAME=VALUE, or NAME:TYPE=VALUE to give its type (see
            `anchorage records save --help`).

            Exit status: 0 done; 64 a bad argument or field; 65 a record the stack
            refuses, or an import file that is not records; 66 an import file that
            cannot be read; 67 no such record; 73 an export file that cannot be
            written; 74 the store cannot be opened, or failed during an import.
            """,
        subcommands: [Save.self, Delete.self, List.self, Import.self, Export.self]
    )

    /// The kinds of records the command edits.
    enum Stack: String, ExpressibleByArgument, CaseIterable {
        case aquasync
        case appsync
        case ota
    }

    struct Device: ParsableArguments {
        @Option(help: "The device's local store: sqlite:PATH, postgres://USER@HOST:PORT/DATABASE or memory.")
        var store = StoreOption(argument: "sqlite:anchorage-device.sqlite")!

        @Option(help: "Whose records: Aquasync's, appSync's or OTA's.")
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

        /// The model (or appSync type) and the file named by an import's or export's arguments; the
        /// model is empty with `--stack ota`, which names the dataclass with `--dataclass`.
        func modelAndFile(_ arguments: [String]) throws -> (model: String, file: String) {
            switch (stack, arguments.count) {
            case (.ota, 1): return ("", arguments[0])
            case (.ota, _): throw ValidationError("with --stack ota, name the file alone (the dataclass with --dataclass)")
            case (_, 2): return (arguments[0], arguments[1])
            default: throw ValidationError("name the \(stack == .appsync ? "type" : "model") and the file")
            }
        }

        /// A batch of a records file checked, and for Aquasync encoded, by ``prepare(_:model:firstNumber:in:)``,
        /// for ``save(_:firstNumber:in:)``.
        enum PreparedBatch: Sendable {
            case aquasync(AquasyncLocalRecords.PreparedWrites)
            case appsync(model: String, [(guid: String?, fields: [String: SyncValue])])
            case ota([(luid: String?, entity: String, fields: [String: SyncValue])])

            /// How many records it holds.
            var count: Int {
                switch self {
                case .aquasync(let writes): writes.count
                case .appsync(_, let items): items.count
                case .ota(let items): items.count
                }
            }
        }

        /// Checks `records` (objects of a records file) for the stack, and for Aquasync encodes them,
        /// without the account's lock: an import prepares the next batch while the store commits the
        /// last. `firstNumber` is the first one's number in the file, for messages.
        func prepare(_ records: [[String: SyncValue]], model: String, firstNumber: Int, in store: any SyncStore) async throws
            -> PreparedBatch
        {
            /// The id under `key`, when there is one, and refuses keys the stack does not know.
            func id(_ record: [String: SyncValue], _ index: Int, key: String, allowed: Set<String>) throws -> String? {
                if let unknown = record.keys.sorted().first(where: { !allowed.contains($0) }) {
                    throw failure("record \(firstNumber + index): unknown key \"\(unknown)\"", code: 65)
                }
                guard let value = record[key] else { return nil }
                guard let id = value.stringValue else { throw failure("record \(firstNumber + index): \(key) must be text", code: 65) }
                return id
            }
            func fields(_ record: [String: SyncValue]) -> [String: SyncValue] { record["fields"]?.dictionaryValue ?? [:] }
            do {
                switch stack {
                case .aquasync:
                    let items = try records.enumerated().map { index, record in
                        (gid: try id(record, index, key: "gid", allowed: ["gid", "fields", "dirty"]), fields: fields(record))
                    }
                    return .aquasync(try await AquasyncLocalRecords(store: store).prepare(model, items))
                case .appsync:
                    return .appsync(
                        model: model,
                        try records.enumerated().map { index, record in
                            (guid: try id(record, index, key: "guid", allowed: ["guid", "fields"]), fields: fields(record))
                        })
                case .ota:
                    return .ota(
                        try records.enumerated().map { index, record in
                            guard let entity = record["entity"]?.stringValue else {
                                throw failure("record \(firstNumber + index): an OTA record needs \"entity\"", code: 65)
                            }
                            return (
                                luid: try id(record, index, key: "luid", allowed: ["luid", "entity", "fields"]), entity: entity,
                                fields: fields(record)
                            )
                        })
                }
            } catch let error as AquasyncValidationError {
                throw failure("records \(firstNumber)–\(firstNumber + records.count - 1): cannot save: \(error)", code: 65)
            }
        }

        /// Saves a prepared batch in one transaction of the open `store`; `firstNumber` is its first
        /// record's number in the file, for messages.
        func save(_ batch: PreparedBatch, firstNumber: Int, in store: any SyncStore) async throws {
            do {
                switch batch {
                case .aquasync(let writes):
                    _ = try await AquasyncLocalRecords(store: store).save(writes)
                case .appsync(let model, let items):
                    let (client, type) = try appSyncObjects(model, in: store)
                    _ = try await client.save(type.name, items)
                case .ota(let items):
                    let (records, dataclass) = try await otaRecords(in: store)
                    _ = try await records.save(dataclass: dataclass, items)
                }
            } catch let error as SyncClientError where error.code == .refused {
                // The appSync client refused an object by the protocol's rules (a primary key held, a protocol field).
                throw failure("records \(firstNumber)–\(firstNumber + batch.count - 1): cannot save: \(error.message)", code: 65)
            }
        }

        /// Runs `body` with the device's records.
        func withRecords<Result: Sendable>(_ body: (AquasyncLocalRecords) async throws -> Result) async throws -> Result {
            try await store.withStore { store in try await body(AquasyncLocalRecords(store: store)) }
        }

        /// Runs `body` with an appSync client for the type `type` (`NAME` or `NAME:FIELD+FIELD`), which never syncs.
        func withAppSyncObjects<Result: Sendable>(
            _ type: String, _ body: (AppSyncClient, AppSyncObjectType) async throws -> Result
        ) async throws -> Result {
            try await store.withStore { store in
                let (client, objectType) = try appSyncObjects(type, in: store)
                return try await body(client, objectType)
            }
        }

        /// An appSync client on the open `store` for the type `type` (`NAME` or `NAME:FIELD+FIELD`), which never syncs.
        func appSyncObjects(_ type: String, in store: any SyncStore) throws -> (AppSyncClient, AppSyncObjectType) {
            let objectType = try AppSyncObjectType(argument: type)
            return (AppSyncClient(store: store, transport: NoNetwork(), codec: CodecChoice.json.codec, types: [objectType]), objectType)
        }

        /// Runs `body` with the device's OTA records and the dataclass to work on.
        func withOTARecords<Result: Sendable>(_ body: (OTADeviceRecords, String) async throws -> Result) async throws -> Result {
            try await store.withStore { store in
                let (records, dataclass) = try await otaRecords(in: store)
                return try await body(records, dataclass)
            }
        }

        /// The device's OTA records in the open `store`, and the dataclass to work on.
        func otaRecords(in store: any SyncStore) async throws -> (OTADeviceRecords, String) {
            let account = try await DeviceSettings.otaAccount(user, in: store)
            return (OTADeviceRecords(store: store, account: account), dataclass ?? OTADefaults.dataclass)
        }
    }

    struct Save: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or replace a record: anchorage records save Contact name=Ada born:int=1815",
            discussion: """
                A field is NAME=VALUE or NAME:TYPE=VALUE. Without a type, VALUE is text
                unless it reads back as exactly what was typed: 1815 is an integer, 2.5
                a real, true and false are Booleans; 02134, +4930123, 1e3, 0x10, 1.50,
                -0 and " 7" stay text. A type says what you mean:

                  string  zip:string=12345
                  int     born:int=1815
                  real    ratio:real=1.50
                  bool    flag:bool=true
                  date    when:date=2026-01-01T00:00:00Z   (ISO 8601, Z or offset)
                  data    photo:data=@face.jpg, key:data=AAEC   (@FILE or base64)
                  json    'emails:json=[{"label":"home","value":"a@b.c"}]'

                json takes any JSON value (arrays, objects, null) in the form
                `records list` prints, where {"$date":"..."} is a date and
                {"$data":"..."} data, so a listed field saved back is the same value.
                A field whose own name ends in :WORD is written with a type:
                a:b:string=x.

                Prints the record's id. With --stack appsync the first argument is the
                type and --guid names the object to replace; with --stack ota the first
                argument is the entity and --luid names the record to replace:
                  anchorage records save --stack ota com.apple.contacts.Contact "first name=Ada"
                """)

        @Argument(
            help: """
                The model, such as Contact; with --stack appsync the type (NAME or NAME:FIELD+FIELD); with --stack \
                ota the entity, such as com.apple.contacts.Contact.
                """)
        var model: String

        @Argument(help: "Fields as NAME=VALUE or NAME:TYPE=VALUE (TYPE: string, int, real, bool, date, data, json).")
        var fields: [String] = []

        @Option(help: "Aquasync: the record's gid; a new one when omitted.")
        var gid: String?

        @Option(help: "appSync: the guid of the object to replace; a new object when omitted.")
        var guid: String?

        @Option(help: "OTA: the LUID of the record to replace; a new record when omitted.")
        var luid: String?

        @OptionGroup var device: Device

        /// Refuses an id option of another stack.
        func validate() throws {
            let given = [(Stack.aquasync, "--gid", gid), (.appsync, "--guid", guid), (.ota, "--luid", luid)]
            for (stack, option, value) in given where value != nil && stack != device.stack {
                throw ValidationError("\(option) goes with --stack \(stack.rawValue)")
            }
        }

        func run() async throws {
            let values: [String: SyncValue]
            do {
                values = try RecordFields.fields(fields)
            } catch {
                throw failure(error.description, code: 64)
            }
            let (model, gid, guid, luid) = (model, gid, guid, luid)
            let saved: String
            do {
                switch device.stack {
                case .aquasync:
                    saved = try await device.withRecords { try await $0.save(model, gid: gid, fields: values) }
                case .appsync:
                    saved = try await device.withAppSyncObjects(model) { client, type in
                        try await client.save(type.name, guid: guid, fields: values)
                    }
                case .ota:
                    saved = try await device.withOTARecords { records, dataclass in
                        try await records.save(dataclass: dataclass, luid: luid, entity: model, fields: values)
                    }
                }
            } catch let error as AquasyncValidationError {
                throw failure("cannot save: \(error)", code: 65)
            } catch let error as SyncClientError where error.code == .refused {
                throw failure("cannot save: \(error.message)", code: 65)
            }
            print(saved)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Soft-delete a record: anchorage records delete MODEL GID, delete --stack appsync TYPE GUID, or delete --stack ota LUID.")

        @Argument(help: "The model; with --stack appsync the type; with --stack ota the record's LUID.")
        var model: String

        @Argument(help: "Aquasync: the record's gid; appSync: the object's guid.")
        var id: String?

        @OptionGroup var device: Device

        /// Checks that the arguments fit the stack: MODEL GID, TYPE GUID, or one LUID.
        func validate() throws {
            switch device.stack {
            case .aquasync: if id == nil { throw ValidationError("name the record: anchorage records delete MODEL GID") }
            case .appsync: if id == nil { throw ValidationError("name the object: anchorage records delete --stack appsync TYPE GUID") }
            case .ota: if id != nil { throw ValidationError("with --stack ota, name the record by its LUID alone") }
            }
        }

        func run() async throws {
            switch device.stack {
            case .aquasync:
                let (model, gid) = (model, id ?? "")
                try await device.withRecords { try await $0.delete(model, gid: gid) }
            case .appsync:
                let guid = id ?? ""
                let found = try await device.withAppSyncObjects(model) { client, type in
                    guard try await client.object(type.name, guid: guid) != nil else { return false }
                    try await client.delete(type.name, guid: guid)
                    return true
                }
                guard found else { throw failure("no object \(guid) of type \(model)", code: 67) }
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
            abstract: "List a model's records (or an appSync type's, or an OTA dataclass's), one JSON line each.",
            discussion: """
                An Aquasync line has the record's gid, dirty (whether its change waits
                to be sent) and fields; an appSync line its guid and fields; an OTA
                line its luid, entity and fields. Conflicts that wait for an answer are
                listed by `anchorage conflicts list`.

                fields holds each value in the form NAME:json=... reads: text is a JSON
                string of exactly the text saved; integers and reals are JSON numbers
                (a real always with a '.' or an exponent); true, false, null, arrays
                and objects are JSON's own; a date is {"$date":"2026-01-01T00:00:00Z"},
                data {"$data":"BASE64"}, NaN and infinity {"$real":"nan"} ("inf",
                "-inf"), and an object that is one entry under one of these keys is
                wrapped in {"$dictionary":...}.
                """)

        @Argument(help: "The model, or with --stack appsync the type; not with --stack ota, which lists --dataclass.")
        var model: String?

        @OptionGroup var device: Device

        /// Checks that a model is named for Aquasync and appSync, and not for OTA.
        func validate() throws {
            switch device.stack {
            case .aquasync: if model == nil { throw ValidationError("name the model: anchorage records list MODEL") }
            case .appsync: if model == nil { throw ValidationError("name the type: anchorage records list --stack appsync TYPE") }
            case .ota: if model != nil { throw ValidationError("with --stack ota, name the dataclass with --dataclass") }
            }
        }

        func run() async throws {
            switch device.stack {
            case .aquasync:
                let model = model ?? ""
                for object in try await device.withRecords({ try await $0.objects(model) }) {
                    print(
                        try RecordFields.line([
                            "gid": .string(object.gid), "dirty": .bool(object.isDirty),
                            "fields": RecordFields.listedFields(object.fields),
                        ]))
                }
            case .appsync:
                let objects = try await device.withAppSyncObjects(model ?? "") { client, type in
                    try await client.objects(type.name)
                }
                for object in objects {
                    print(try RecordFields.line(["guid": .string(object.guid), "fields": RecordFields.listedFields(object.fields)]))
                }
            case .ota:
                let records = try await device.withOTARecords { records, dataclass in
                    try await records.records(dataclass: dataclass)
                }
                for (luid, record) in records.sorted(by: { $0.key < $1.key }) {
                    print(
                        try RecordFields.line([
                            "luid": .string(luid), "entity": .string(record.entity),
                            "fields": RecordFields.listedFields(record.fields),
                        ]))
                }
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save every record of a file: anchorage records import Contact contacts.jsonl",
            discussion: """
                The file holds records in the form `anchorage records list` prints
                (Aquasync: {"gid", "fields"}; appSync: {"guid", "fields"}; OTA:
                {"luid", "entity", "fields"}), one a line in a .jsonl file (or - for
                standard input), or in an array in a .json, .plist, .bplist or .msgpack
                document. An id that is left out makes a new record; a given one
                replaces that record. Each save is journaled, so `anchorage sync` sends
                them all.

                The whole file is checked before anything is saved; records are then
                saved --batch-size to a transaction, with a progress bar on a
                terminal. A JSON Lines file is read a batch at a time, twice (once
                to check it, once to save it), so a file of any length takes little
                memory; the next batch is read and made ready (for Aquasync,
                encoded) while one is saved. A document of
                another codec is read whole. If the store fails part way (a full
                disk), the records of the transactions that committed stay, and the
                message says how many.

                  anchorage records import Contact contacts.jsonl
                  anchorage records import --stack appsync booking bookings.json
                  anchorage records import --stack ota contacts.plist

                Prints how many records were saved.
                """)

        @Argument(help: "The model (--stack appsync: the type) and the file; with --stack ota the file alone.")
        var arguments: [String]

        @OptionGroup var device: Device

        @Option(help: "How many records are saved in one transaction (and parsed at a time).")
        var batchSize = 5_000

        /// Checks the arguments: a model and a file, or with `--stack ota` a file, and a batch size of at least 1.
        func validate() throws {
            _ = try device.modelAndFile(arguments)
            guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        }

        func run() async throws {
            let (model, path) = try device.modelAndFile(arguments)
            let records = try await RecordsFile(path).checkedRecords(pageSize: batchSize)
            let progress = ImportProgress(total: records.count)
            var saved = 0
            do {
                // The store is opened once for the whole file; each batch is one transaction.
                // Each batch is checked and encoded beside the commit of the one before.
                try await device.store.withStore { store in
                    try await records.forEachPage(of: batchSize) { batch, firstNumber in
                        try await device.prepare(batch, model: model, firstNumber: firstNumber, in: store)
                    } save: { batch, firstNumber in
                        try await device.save(batch, firstNumber: firstNumber, in: store)
                        saved += batch.count
                        progress.show(saved)
                    }
                }
            } catch let error as ExitCode {
                throw error
            } catch {
                throw failure("\(saved) of \(records.count) records saved, then: \(error)", code: 74)
            }
            print("imported \(saved) records")
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every live record to a file: anchorage records export Contact contacts.jsonl",
            discussion: """
                Writes the records `anchorage records list` lists, in the form
                `anchorage records import` reads: one a line in a .jsonl file (or - for
                standard output), or an array in a .json, .plist, .bplist or .msgpack
                document. The file is replaced whole or not at all.
                """)

        @Argument(help: "The model (--stack appsync: the type) and the file; with --stack ota the file alone.")
        var arguments: [String]

        @OptionGroup var device: Device

        /// Checks the arguments: a model and a file, or with `--stack ota` a file.
        func validate() throws {
            _ = try device.modelAndFile(arguments)
        }

        func run() async throws {
            let (model, path) = try device.modelAndFile(arguments)
            let file = try RecordsFile(path)
            let records: [[String: SyncValue]]
            switch device.stack {
            case .aquasync:
                records = try await device.withRecords { try await $0.objects(model) }.map {
                    ["gid": .string($0.gid), "fields": .dictionary($0.fields)]
                }
            case .appsync:
                records = try await device.withAppSyncObjects(model) { client, type in try await client.objects(type.name) }.map {
                    ["guid": .string($0.guid), "fields": .dictionary($0.fields)]
                }
            case .ota:
                records = try await device.withOTARecords { records, dataclass in try await records.records(dataclass: dataclass) }
                    .sorted { $0.key < $1.key }
                    .map { ["luid": .string($0.key), "entity": .string($0.value.entity), "fields": .dictionary($0.value.fields)] }
            }
            try file.write(records)
            if path != "-" { print("exported \(records.count) records") }
        }
    }
}

/// The transport of a client that only edits its local store: `anchorage
/// records` never syncs, so any request is a mistake.
private struct NoNetwork: SyncClientTransport {
    func send(_ request: SyncRequest) async throws -> SyncResponse {
        throw TransportError(.connectionFailed, "anchorage records does not use the network")
    }
}
