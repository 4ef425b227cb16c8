#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import ServiceLifecycle
public import SyncCore
public import SyncHTTPServer
public import SyncPush

/// The operator console's JSON API: accounts, their devices, collections and records, each record's
/// size in every codec, and the server's load over the last minutes. Read-only.
///
/// Mount it at `/console/api` and serve ``pages`` beside it; only operators may call it
/// (``isOperator``; everyone else gets 403). The paths, all `GET`, are described in
/// `docs/openapi.yaml` and `docs/console.md`:
///
/// | path | answer |
/// |---|---|
/// | `/me` | the signed-in account |
/// | `/accounts` | every account of the users file and the store |
/// | `/accounts/{a}/devices` | what the server saw of each device (``DeviceActivity``), push state |
/// | `/accounts/{a}/collections` | record counts and the latest change position per collection |
/// | `/accounts/{a}/collections/{c}/records?after=&limit=` | a page of records in id order |
/// | `/accounts/{a}/collections/{c}/records/{id}` | one record and its size in each codec |
/// | `/load` | a sample a second: requests, syncs, errors, p50/p99, open push connections |
///
/// Run it as a `Service` too (``run()``): once a second it notes the open push connections in the
/// ``LoadHistory``, so the chart shows them over time.
///
/// ```swift
/// let console = ConsoleService(
///     store: store, codecs: codecs, activity: activity, history: history, push: push, users: authenticator)
/// let router = ServiceRouter().mounting(console, at: "/console/api")
/// let server = HTTPSyncServer(service: router, authenticator: authenticator,
///                             observability: ServerObservability(loadHistory: history), pages: ConsoleService.pages)
/// ```
public struct ConsoleService: SyncService, Service {
    /// The store whose data the console shows.
    public let store: any BrowsableStore
    /// The codecs whose sizes a record is shown in.
    public let codecs: CodecSet
    /// What the server saw of each device.
    public let activity: DeviceActivity
    /// The server's load, a second at a time.
    public let history: LoadHistory
    /// The push server, for each device's push state and the open connections; `nil` without push.
    public let push: PushServer?
    /// Whether an account may use the console.
    public let isOperator: @Sendable (AccountID) -> Bool
    /// The accounts that can sign in (the users file's), shown even before they write anything.
    public let knownAccounts: @Sendable () -> [AccountID]
    private let sleeper: any Clock<Duration>

    /// The most records one page may ask for.
    public static let maxPageSize = 500
    /// The records a page has when it does not say.
    public static let defaultPageSize = 100

    /// Makes the console.
    /// - Parameters:
    ///   - store: The store whose data the console shows.
    ///   - codecs: The codecs whose sizes a record is shown in.
    ///   - activity: What the server saw of each device (mount its middleware around the stacks).
    ///   - history: The server's load (give it to the server's ``ServerObservability``).
    ///   - push: The push server, or `nil`.
    ///   - isOperator: Whether an account may use the console.
    ///   - knownAccounts: The accounts that can sign in.
    ///   - sleeper: The clock the once-a-second sampling sleeps on.
    public init(
        store: any BrowsableStore, codecs: CodecSet, activity: DeviceActivity, history: LoadHistory, push: PushServer?,
        isOperator: @escaping @Sendable (AccountID) -> Bool, knownAccounts: @escaping @Sendable () -> [AccountID] = { [] },
        sleeper: any Clock<Duration> = ContinuousClock()
    ) {
        self.store = store
        self.codecs = codecs
        self.activity = activity
        self.history = history
        self.push = push
        self.isOperator = isOperator
        self.knownAccounts = knownAccounts
        self.sleeper = sleeper
    }

    /// Makes the console for the accounts of a users file: its operators (``UsersFile/Role/operator``) may use it.
    public init(
        store: any BrowsableStore, codecs: CodecSet, activity: DeviceActivity, history: LoadHistory, push: PushServer?,
        users: UsersFileAuthenticator
    ) {
        self.init(
            store: store, codecs: codecs, activity: activity, history: history, push: push,
            isOperator: { users.account($0, has: .operator) }, knownAccounts: { users.accounts })
    }

    /// Notes the open push connections in ``history`` once a second until the server shuts down.
    public func run() async throws {
        guard let push else { return }
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    history.note(gauge: await push.deviceCounts().connected)
                    try await sleeper.sleep(for: .seconds(1))
                }
            }
        } catch is CancellationError {
            return
        }
    }

    /// Answers one console request: 403 for an account that is not an operator, 405 for a method other than GET.
    public func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        guard isOperator(context.account) else {
            throw SyncServiceError(status: 403, message: "\(context.account) is not an operator (anchorage users operator NAME)")
        }
        guard request.method == .get || request.method.rawValue == "HEAD" else {
            throw SyncServiceError.methodNotAllowed("the console is read-only: use GET")
        }
        let rest = request.pathWithoutQuery.dropFirst(context.mountPath.count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: true).map { PercentEncoding.decode($0) }
        let query = request.queryItems
        switch parts.count {
        case 0: return try Self.json(Me(account: context.account.rawValue, operator: true))
        case 1 where parts[0] == "me": return try Self.json(Me(account: context.account.rawValue, operator: true))
        case 1 where parts[0] == "accounts": return try Self.json(try await accounts())
        case 1 where parts[0] == "load": return try Self.json(await load())
        case 3 where parts[0] == "accounts" && parts[2] == "devices":
            return try Self.json(await devices(of: AccountID(parts[1])))
        case 3 where parts[0] == "accounts" && parts[2] == "collections":
            return try Self.json(try await collections(of: AccountID(parts[1])))
        case 5 where parts[0] == "accounts" && parts[2] == "collections" && parts[4] == "records":
            let limit = try Self.pageSize(query["limit"])
            return try Self.json(
                try await records(
                    of: AccountID(parts[1]), in: CollectionID(parts[3]), after: query["after"].map { RecordID($0) },
                    limit: limit))
        case 6 where parts[0] == "accounts" && parts[2] == "collections" && parts[4] == "records":
            return try Self.json(try await record(of: AccountID(parts[1]), RecordKey(collection: CollectionID(parts[3]), id: RecordID(parts[5]))))
        default:
            throw SyncServiceError.notFound("no console page at \(request.pathWithoutQuery)")
        }
    }

    // MARK: Answers

    private func accounts() async throws -> AccountList {
        let summaries = try await store.accountSummaries()
        var positions: [AccountID: UInt64] = [:]
        for summary in summaries { positions[summary.account] = summary.lastPosition.rawValue }
        let inUsersFile = Set(knownAccounts())
        let all = inUsersFile.union(positions.keys).union(activity.accountsSeen).sorted()
        return AccountList(
            accounts: all.map { account in
                AccountList.Account(
                    account: account.rawValue, lastPosition: positions[account] ?? 0, devices: activity.deviceCount(of: account),
                    hasPassword: inUsersFile.contains(account), operator: isOperator(account))
            })
    }

    private func devices(of account: AccountID) async -> DeviceList {
        let pushed = await push?.deviceStatuses(of: account) ?? []
        var pushByDevice: [String: PushDeviceStatus] = [:]
        for status in pushed { pushByDevice[status.device] = status }
        var list = activity.devices(of: account).map { device in
            DeviceList.Device(
                device: device.device, stack: device.stack, codec: device.codec, lastSeen: device.lastSeen,
                lastStatus: device.lastStatus, requests: device.requests, bytesIn: device.bytesIn, bytesOut: device.bytesOut,
                userAgent: device.userAgent, push: pushByDevice.removeValue(forKey: device.device).map(DeviceList.Push.init))
        }
        // Devices registered for push that have not synced since the server started.
        for status in pushByDevice.values.sorted(by: { $0.device < $1.device }) {
            list.append(
                DeviceList.Device(
                    device: status.device, stack: "push", codec: nil, lastSeen: nil, lastStatus: nil, requests: 0, bytesIn: 0,
                    bytesOut: 0, userAgent: nil, push: DeviceList.Push(status)))
        }
        return DeviceList(devices: list)
    }

    private func collections(of account: AccountID) async throws -> CollectionList {
        CollectionList(
            collections: try await store.collectionSummaries(of: account).map { summary in
                CollectionList.Collection(
                    collection: summary.collection.rawValue, records: summary.liveRecords, deleted: summary.deletedRecords,
                    latestPosition: summary.latestPosition.rawValue, latestModified: summary.latestModified)
            })
    }

    private func records(of account: AccountID, in collection: CollectionID, after: RecordID?, limit: Int) async throws
        -> RecordPage
    {
        // One more than asked tells whether another page follows.
        let page = try await store.recordPage(of: account, in: collection, after: after, limit: limit + 1)
        let shown = page.prefix(limit)
        return RecordPage(
            records: shown.map(ConsoleRecord.init), next: page.count > limit ? shown.last?.record.id.rawValue : nil)
    }

    private func record(of account: AccountID, _ key: RecordKey) async throws -> RecordDetail {
        guard let stored = try await store.storedRecord(of: account, key) else {
            throw SyncServiceError.notFound("no record \(key.id) in \(key.collection) of \(account)")
        }
        let value = SyncValue.dictionary(stored.record.fields)
        let sizes = codecs.codecs.map { codec in
            let bytes = try? codec.encode(value)
            return RecordDetail.Size(
                codec: Self.displayName(of: codec.id), mediaType: codec.primaryMediaType, bytes: bytes?.count,
                note: bytes == nil ? "cannot carry these fields" : nil)
        }
        return RecordDetail(record: ConsoleRecord(stored), sizes: sizes)
    }

    private func load() async -> LoadReport {
        let counts = await push?.deviceCounts() ?? (registered: 0, connected: 0)
        history.note(gauge: counts.connected)
        return LoadReport(
            interval: 1, pushConnections: counts.connected, registeredDevices: counts.registered,
            samples: history.samples().map { sample in
                LoadReport.Sample(
                    time: sample.time, requests: sample.requests, syncs: sample.syncs, errors: sample.errors, p50: sample.p50,
                    p99: sample.p99, pushConnections: sample.gauge)
            })
    }

    // MARK: Helpers

    /// The name people know a codec by: `XML plist`, `binary plist`, `JSON`, `MessagePack`, else its id.
    public static func displayName(of codec: CodecID) -> String {
        switch codec {
        case .xmlPlist: "XML plist"
        case .binaryPlist: "binary plist"
        case .json: "JSON"
        case .messagePack: "MessagePack"
        default: codec.rawValue
        }
    }

    private static func pageSize(_ text: String?) throws -> Int {
        guard let text else { return defaultPageSize }
        guard let size = Int(text), (1...maxPageSize).contains(size) else {
            throw SyncServiceError.badRequest("limit must be a whole number from 1 to \(maxPageSize)")
        }
        return size
    }

    private static func json(_ value: some Encodable) throws -> SyncResponse {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return SyncResponse(status: 200, contentType: "application/json", body: Array(try encoder.encode(value)))
    }
}
