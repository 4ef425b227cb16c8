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

    /// Writes `edits` into the device store at `path` through the stack's client, as an application
    /// that saves many records at once does, and notes the id of each new record in `ids` (by name).
    ///
    /// Consecutive saves go into one batch save (one transaction) until a save touches a record
    /// already in the batch, or modifies one the batch adds, whose id the batch has not returned
    /// yet; deletions go one at a time. Each write has returned when this returns: the edits are
    /// acknowledged.
    func write(_ edits: [Edit], toStoreAt path: String, ids: inout [String: String]) async throws {
        ids = try await Self.withStore(at: path) { [ids] store in
            var ids = ids
            let writer = writer(store)
            var batch: [(name: String, id: String?, fields: [String: SyncValue])] = []
            func saveBatch() async throws {
                let saved = try await writer.save(batch.map { ($0.id, $0.fields) })
                for (entry, id) in zip(batch, saved) { ids[entry.name] = id }
                batch.removeAll()
            }
            for edit in edits {
                if batch.contains(where: { $0.name == edit.name }) { try await saveBatch() }
                switch edit {
                case .add(let name, let fields): batch.append((name, nil, fields))
                case .modify(let name, let fields):
                    let id = try #require(ids[name], "the id of \(name)")
                    batch.append((name, id, fields))
                case .delete(let name): try await writer.delete(try #require(ids[name], "the id of \(name)"))
                }
            }
            try await saveBatch()
            return ids
        }
    }

    /// The stack's client on `store`, as a batch save (each record's id, or `nil` for a new record,
    /// and its fields; returns the ids in order) and a delete (by id).
    private func writer(
        _ store: SQLiteStore
    ) -> (save: ([(String?, [String: SyncValue])]) async throws -> [String], delete: (String) async throws -> Void) {
        switch self {
        case .aquasync:
            let records = Self.aquasync(store).records
            return (
                { try await records.save(Self.model, $0.map { (gid: $0.0, fields: $0.1) }) },
                { try await records.delete(Self.model, gid: $0) }
            )
        case .appsync:
            let client = Self.appSync(store)
            return (
                { try await client.save(Self.appSyncType, $0.map { (guid: $0.0, fields: $0.1) }) },
                { try await client.delete(Self.appSyncType, guid: $0) }
            )
        case .ota:
            let records = Self.ota(store)
            return (
                { try await records.save(dataclass: Self.dataclass, $0.map { (luid: $0.0, entity: Self.entity, fields: $0.1) }) },
                { try await records.delete(dataclass: Self.dataclass, luid: $0) }
            )
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
