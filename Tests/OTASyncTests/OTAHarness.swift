import Foundation
import OTASync
import Synchronization
import SyncBinaryPlist
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncTesting
import SyncXMLPlist
import TestSupport

extension TestCodec {
    /// The OTA server's codecs, XML property lists (the protocol's own) first.
    static var otaServerCodecs: CodecSet { CodecSet([xmlPlist, binaryPlist, json, msgpack].map(\.codec)) }
}

/// The dataclasses the tests sync.
enum Dataclass {
    static let contacts = "com.apple.Contacts"
    static let calendars = "com.apple.Calendars"
    static let bookmarks = "com.apple.Bookmarks"
    static let all = [contacts, calendars, bookmarks]
    static let contact = "com.apple.contacts.Contact"
}

/// A server store and server for account `ada`, and devices syncing with it in process or over HTTP.
struct OTAHarness: Sendable {
    let serverStore = MemoryStore()
    let server: OTAServer
    let account: AccountID = "ada"

    init(maxMessageBytes: Int = 1 << 20, policy: any ConflictPolicy = NewestWinsPolicy(), validation: RecordValidation = .acceptAll) {
        server = OTAServer(
            store: serverStore, codecs: TestCodec.otaServerCodecs, dataclasses: Set(Dataclass.all), conflictPolicy: policy,
            validation: validation, maxMessageBytes: maxMessageBytes)
    }

    /// An in-process transport to the server as `ada`, for tests that only run in process.
    var loopback: any SyncClientTransport { Self.loopback(to: server) }

    /// An in-process transport to `service` — a server of the test's own, or one behind a middleware — as `ada`.
    static func loopback(to service: any SyncService) -> any SyncClientTransport {
        LoopbackTransport(service: service, authenticator: SingleAccountAuthenticator(account: "ada"))
    }

    /// Knows `TransportRoute.ada` (basic, `ada` / `secret`) as `TransportRoute.defaultAuthenticator`
    /// does, without its key derivation on each test's first request.
    static let authenticator = StaticAuthenticator(passwords: ["ada": "secret"])

    /// Runs `body` with a transport to the server, mounted at `/ota`, as Ada (`TransportRoute.ada`)
    /// by `route`: in process, or over HTTP on a free loopback port.
    func withTransport(_ route: TransportRoute, _ body: (any SyncClientTransport) async throws -> Void) async throws {
        try await route.withTransport(
            to: ServiceRouter().mounting(server, at: "/ota"), authenticator: Self.authenticator,
            credentials: TransportRoute.ada, body)
    }

    /// A device with its own memory store.
    func device(
        _ id: String, codec: TestCodec = .xmlPlist, through transport: (any SyncClientTransport)? = nil,
        store: any SyncStore = MemoryStore(), maxMessageBytes: Int = 1 << 20, defersIDMap: Bool = true, retries: Int = 3,
        itemType: OTAItemType = .records, conflictPolicy: any ConflictPolicy = .serverWins, clock: any WallClock = SystemWallClock()
    ) -> Device {
        let records = OTADeviceRecords(store: store, account: account, clock: clock)
        return Device(
            records: records,
            client: OTAClient(
                records: records, deviceID: id, transport: transport ?? loopback, codec: codec.codec,
                dataclasses: Dataclass.all,
                configuration: .init(
                    retry: Self.retryAtOnce(retries), itemType: itemType, maxMessageBytes: maxMessageBytes,
                    defersIDMap: defersIDMap, conflictPolicy: conflictPolicy)))
    }

    /// Sends a message that got no answer again at once, up to `retries` times: no test waits.
    static func retryAtOnce(_ retries: Int) -> RetryPolicy {
        RetryPolicy(maxAttempts: retries + 1, initialDelay: .zero, jitter: 0)
    }

    /// The server's live records of a dataclass, by content.
    func serverRecords(_ dataclass: String) async throws -> [OTARecord] {
        try await serverStore.transaction(for: account) { tx in
            try await tx.records(in: CollectionID(dataclass), after: nil, limit: 1_000_000)
                .filter { !$0.record.isDeleted }.map { try OTARecord($0.record) }
        }
    }
}

/// A device: its records and its client.
struct Device: Sendable {
    let records: OTADeviceRecords
    let client: OTAClient

    @discardableResult
    func add(_ fields: [String: SyncValue], in dataclass: String = Dataclass.contacts) async throws -> String {
        try await records.save(dataclass: dataclass, entity: Dataclass.contact, fields: fields)
    }

    @discardableResult
    func sync() async throws -> OTASyncReport { try await client.sync() }

    /// The device's live records of a dataclass, by content, sorted for comparison.
    func contents(_ dataclass: String = Dataclass.contacts) async throws -> [OTARecord] {
        sorted(Array(try await records.records(dataclass: dataclass).values))
    }
}

/// Sorts records for comparison.
func sorted(_ records: [OTARecord]) -> [OTARecord] { records.sorted { sortKey($0) < sortKey($1) } }

/// A record's entity and fields as text, keys in order: the same text for equal records.
func sortKey(_ record: OTARecord) -> String {
    record.entity + record.fields.sorted { $0.key < $1.key }.map { "|\($0.key)=\($0.value)" }.joined()
}

/// Records the largest request and answer bodies that passed.
final class SizeRecorder: SyncClientMiddleware, Sendable {
    private let sizes = Mutex((request: 0, answer: 0, requests: 0))

    var largestRequest: Int { sizes.withLock { $0.request } }
    var largestAnswer: Int { sizes.withLock { $0.answer } }
    var requests: Int { sizes.withLock { $0.requests } }

    func intercept(
        _ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        let response = try await next(request)
        sizes.withLock {
            $0.request = max($0.request, request.body.count)
            $0.answer = max($0.answer, response.body.count)
            $0.requests += 1
        }
        return response
    }
}
