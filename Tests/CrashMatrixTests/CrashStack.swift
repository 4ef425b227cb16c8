import AppSync
import Aquasync
import OTASync
import SyncCore
import SyncJSON
import SyncSQLite
import Testing

/// One of the three stacks, as the application sees it: edits written into a
/// device's SQLite store through the stack's public client, and the device's
/// live records read back the same way. `anchorage sync --stack NAME` syncs them.
enum CrashStack: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case aquasync
    case appsync
    case ota

    /// The account on the server, and OTA's account in the device's store.
    static let account: AccountID = "ada"
    /// The Aquasync model the records belong to.
    static let model = "Contact"
    /// The appSync type (`anchorage sync`'s default: primary key `pk`).
    static let appSyncType = "booking"
    /// The OTA dataclass and entity.
    static let dataclass = "com.apple.Contacts"
    static let entity = "com.apple.contacts.Contact"

    var testDescription: String { rawValue }

    /// How the test opens a device store. A commit survives `SIGKILL` at every durability level (only
    /// power loss tells them apart), and nothing kills the test process, so its commits need not wait
    /// for the disk. `anchorage sync` opens the store its own way.
    static let storeConfiguration = SQLiteStore.Configuration(durability: .normal)

    /// What `anchorage sync` needs besides the server, the store and the account.
    var syncArguments: [String] {
        ["--stack", rawValue] + (self == .ota ? ["--dataclass", Self.dataclass] : [])
    }

    /// Writes `edits` into the device store at `path`, one save or delete at a
    /// time as an application makes them, and notes the id of each new record in
    /// `ids` (by name). Each write has returned when this returns: the edits are
    /// acknowledged.
    func write(_ edits: [Edit], toStoreAt path: String, ids: inout [String: String]) async throws {
        try await Self.withStore(at: path) { store in
            let apply = editor(store)
            for edit in edits {
                switch edit {
                case .add(let name, _): ids[name] = try await apply(edit, nil)
                case .modify(let name, _), .delete(let name):
                    let id: String = try #require(ids[name], "the id of \(name)")
                    _ = try await apply(edit, id)
                }
            }
        }
    }

    /// Makes an edit through the stack's client on `store`, given the record's id on this device (`nil`
    /// for a new record), and returns the record's id.
    private func editor(_ store: SQLiteStore) -> (Edit, String?) async throws -> String {
        switch self {
        case .aquasync:
            let client = Self.aquasync(store)
            return Self.editor(
                save: { try await client.save(Self.model, gid: $0, fields: $1) },
                delete: { try await client.delete(Self.model, gid: $0) })
        case .appsync:
            let client = Self.appSync(store)
            return Self.editor(
                save: { try await client.save(Self.appSyncType, guid: $0, fields: $1) },
                delete: { try await client.delete(Self.appSyncType, guid: $0) })
        case .ota:
            let records = Self.ota(store)
            return Self.editor(
                save: { try await records.save(dataclass: Self.dataclass, luid: $0, entity: Self.entity, fields: $1) },
                delete: { try await records.delete(dataclass: Self.dataclass, luid: $0) })
        }
    }

    /// An editor from a client's save (id or `nil`, fields; returns the id) and delete (id).
    private static func editor(
        save: @escaping (String?, [String: SyncValue]) async throws -> String,
        delete: @escaping (String) async throws -> Void
    ) -> (Edit, String?) async throws -> String {
        { edit, id in
            switch edit {
            case .add(_, let fields), .modify(_, let fields):
                return try await save(id, fields)
            case .delete:
                let id = try #require(id)
                try await delete(id)
                return id
            }
        }
    }

    /// The live records of the device store at `path`: each one's id on that device and its fields.
    func liveRecords(inStoreAt path: String) async throws -> [(id: String, fields: [String: SyncValue])] {
        try await Self.withStore(at: path) { store in
            switch self {
            case .aquasync: try await Self.aquasync(store).objects(Self.model).map { ($0.gid, $0.fields) }
            case .appsync: try await Self.appSync(store).objects(Self.appSyncType).map { ($0.guid, $0.fields) }
            case .ota: try await Self.ota(store).records(dataclass: Self.dataclass).map { ($0.key, $0.value.fields) }
            }
        }
    }

    /// The stack's client on `store`, for local reads and writes only.
    private static func aquasync(_ store: SQLiteStore) -> AquasyncClient {
        AquasyncClient(store: store, transport: OfflineTransport(), codec: JSONCodec())
    }

    private static func appSync(_ store: SQLiteStore) -> AppSyncClient {
        AppSyncClient(
            store: store, transport: OfflineTransport(), codec: JSONCodec(), types: [AppSyncObjectType(appSyncType)])
    }

    private static func ota(_ store: SQLiteStore) -> OTADeviceRecords {
        OTADeviceRecords(store: store, account: account)
    }

    /// Opens the store at `path`, runs `body` with it and closes it, so that the `anchorage sync`
    /// process that runs next finds every write in the file.
    private static func withStore<Result>(
        at path: String, _ body: (SQLiteStore) async throws -> Result
    ) async throws -> Result {
        let store = try SQLiteStore(path: path, configuration: storeConfiguration)
        let result: Result
        do {
            result = try await body(store)
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
        return result
    }

}

/// The transport of a client that only reads and writes its local store: the
/// `anchorage sync` child process does the syncing.
private struct OfflineTransport: SyncClientTransport {
    struct Offline: Error {}

    func send(_ request: SyncRequest) async throws -> SyncResponse { throw Offline() }
}
