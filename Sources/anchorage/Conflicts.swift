import ArgumentParser
import FileSync
import Foundation
import SyncCore

/// `anchorage conflicts`: the conflicts a device keeps for its user, and the user's answers.
struct Conflicts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the conflicts that wait for an answer on a device, and answer them.",
        discussion: """
            A sync with --priority ask keeps every conflict it meets in the device's
            journal instead of deciding it: the record stays as the device has it and
            its change is not sent. `anchorage conflicts list` shows each one with the
            version both sides started from (base), the device's (mine) and the
            server's (theirs), and `anchorage conflicts resolve ID --keep mine|theirs|both`
            answers it; the next `anchorage sync` carries the answer out:

              anchorage sync --priority ask                  # "1 conflict waits for an answer"
              anchorage conflicts list
              anchorage conflicts resolve aquasync/Contact/6f1c… --keep both
              anchorage sync

            mine sends the device's version, based on the server's; theirs takes the
            server's version and drops the device's change; both keeps the server's
            version under the record's id and the device's as a new record.

            Exit status: 0 done; 64 a bad argument; 67 no such conflict (or an id that
            names several); 74 the store cannot be opened.
            """,
        subcommands: [List.self, Resolve.self]
    )

    struct Device: ParsableArguments {
        @Option(help: "The device's local store: sqlite:PATH, postgres://USER@HOST:PORT/DATABASE or memory.")
        var store = StoreOption(argument: "sqlite:anchorage-device.sqlite")!

        @Option(help: "Whose conflicts: Aquasync's, appSync's or OTA's.")
        var stack: Sync.Stack = .aquasync

        @Option(help: "OTA: the account the records belong to (default: the one this store was last used with).")
        var user: String?

        @Flag(help: "The questions of `anchorage files sync` (in its store).")
        var files = false

        /// Refuses `--user` without `--stack ota`.
        func validate() throws {
            if stack != .ota, user != nil { throw ValidationError("--user goes with --stack ota") }
        }

        /// Runs `body` with the store and the local account the stack's records live under.
        func withJournal<Result: Sendable>(_ body: (any SyncStore, AccountID) async throws -> Result) async throws -> Result {
            try await store.withStore { store in
                let account =
                    files ? Files.account : stack == .ota ? try await DeviceSettings.otaAccount(user, in: store) : DeviceSettings.account
                return try await body(store, account)
            }
        }

        /// The conflicts of this stack's records in `store`.
        func conflicts(in store: any SyncStore, account: AccountID) async throws -> [SyncConflict] {
            try await store.openConflicts(for: account).filter {
                files ? $0.key.collection == FolderSync.collection : stack.owns($0.key.collection)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the conflicts of a device, one JSON line each.",
            discussion: """
                A line has the conflict's id (give it to `resolve`), the local action and
                its time (localTime, by the device's clock, ISO 8601), the server's
                version's time (remoteTime, by its writer's clock), base, mine and theirs (each the
                record's fields, or {"deleted":true}; base is null when the server did
                not have the record), and answer: null while the conflict waits, or the
                answer the next sync carries out. Fields are in the form `anchorage
                records list` prints.
                """)

        @OptionGroup var device: Device

        func run() async throws {
            let conflicts = try await device.withJournal { store, account in
                try await device.conflicts(in: store, account: account)
            }
            for conflict in conflicts {
                print(
                    try RecordFields.line([
                        "id": .string(conflict.id), "action": .string(conflict.localAction.rawValue),
                        "localTime": .date(conflict.localTime), "remoteTime": .date(conflict.remoteTime),
                        "base": conflict.base.map(Self.listed) ?? .null, "mine": Self.listed(conflict.local),
                        "theirs": Self.listed(conflict.remote), "answer": conflict.answer.map { .string($0.description) } ?? .null,
                    ]))
            }
        }

        /// A version as a line shows it: its fields, or `{"deleted":true}`.
        static func listed(_ record: SyncRecord) -> SyncValue {
            record.isDeleted ? ["deleted": true] : RecordFields.listedFields(record.fields)
        }
    }

    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer a conflict: anchorage conflicts resolve ID --keep mine|theirs|both.",
            discussion: """
                ID is the id `anchorage conflicts list` prints (collection/id), or the
                record's own id (gid, guid or LUID) when only one conflict has it. An
                answer already given may be changed until the next sync carries it out.
                """)

        /// The answers the command line offers.
        enum Keep: String, ExpressibleByArgument, CaseIterable {
            case mine, theirs, both

            var answer: ConflictAnswer {
                switch self {
                case .mine: .keepMine
                case .theirs: .takeTheirs
                case .both: .keepBoth
                }
            }
        }

        @Argument(help: "The conflict: its id as listed, or the record's own id.")
        var id: String

        @Option(help: "Which version to keep: mine (the device's), theirs (the server's), or both.")
        var keep: Keep

        @Option(help: "With --files: create the folder asked about under this name instead.")
        var name: String?

        @OptionGroup var device: Device

        func run() async throws {
            let (id, answer) = (id, name.map { ConflictAnswer.merged(["name": .string($0)]) } ?? keep.answer)
            let outcome: String? = try await device.withJournal { store, account in
                let matches = try await device.conflicts(in: store, account: account)
                    .filter { $0.id == id || $0.key.id.rawValue == id }
                guard matches.count == 1, let conflict = matches.first else {
                    return matches.isEmpty ? "no conflict \(id) waits for an answer" : "\(id) names \(matches.count) conflicts: give the id as listed"
                }
                try await store.answerConflict(conflict.id, with: answer, for: account)
                return nil
            }
            if let outcome { throw failure(outcome, code: 67) }
            print("\(id): keeping \(keep.rawValue); the next sync carries it out")
        }
    }
}

extension Sync.Stack {
    /// Whether the stack keeps its records in `collection` of a device's store.
    func owns(_ collection: CollectionID) -> Bool {
        let name = collection.rawValue
        switch self {
        case .aquasync: return name.hasPrefix("aquasync/")
        case .appsync: return name.hasPrefix("appsync/")
        case .ota: return !name.hasPrefix("aquasync/") && !name.hasPrefix("appsync/")
        }
    }
}
