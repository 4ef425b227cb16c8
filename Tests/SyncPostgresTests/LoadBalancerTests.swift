import AppSync
import Aquasync
import Foundation
import OTASync
import SyncCore
import SyncHTTPClient
import SyncJSON
import SyncMessagePack
import SyncPostgres
import SyncTesting
import Synchronization
import TestSupport
import Testing

/// Three `anchorage serve` processes on one PostgreSQL database behind nginx
/// round-robin, with no stickiness: every stack's devices converge whichever
/// process answers each request, an OTA session continues on any process, and
/// a process killed with `SIGKILL` in the middle of syncs loses nothing.
@Suite(
    "several anchorage serve processes on one PostgreSQL behind a load balancer",
    .serialized,
    // Slow: 100 rounds of syncs per stack with a process killed every 10, and a 10,000-record slow sync through
    // kills, take a minute or more in a debug build, so they run only when ANCHORAGE_SLOW_TESTS asks
    // for them (scripts/test.sh and CI do).
    .enabled(if: SlowTests.enabled, "slow: syncs through nginx while processes are killed (a minute or more); \(SlowTests.howToRun)"),
    .enabled("no PostgreSQL server (see the reason printed above)") { await TestPostgresServer.isAvailable })
struct LoadBalancerTests {
    @Test(
        "3 devices × 100 rounds of random edits converge through nginx while a process is killed every 10 rounds",
        arguments: BalancedStack.allCases)
    func devicesConvergeWhileProcessesDie(stack: BalancedStack) async throws {
        try await BalancedServers.with(accounts: ["ada"]) { servers in
            let transport = HTTPClientTransport(baseURL: servers.url).with(CredentialsMiddleware(.bearer(servers.tokens["ada"]!)))
            let devices = (0..<3).map { BalancedDevice(stack, number: $0, transport: transport) }
            var random = SeededGenerator(seed: 0x10AD_BA1A ^ UInt64(BalancedStack.allCases.firstIndex(of: stack)!))
            var ledgers = devices.map { _ in DeviceLedger() }
            var slowAfterCheckpoint: [String] = []
            var kills: [Task<Void, any Error>] = []
            for round in 0..<100 {
                for (index, device) in devices.enumerated() {
                    for _ in 0..<2 { try await ledgers[index].edit(on: device, round: round, using: &random) }
                }
                // The kill lands while the three devices sync; the rounds go on while the process restarts.
                if round % 10 == 5 { kills.append(Task { try await servers.killNext() }) }
                let reports = try await withThrowingTaskGroup(of: (Int, BalancedDevice.Report).self) { group in
                    for (index, device) in devices.enumerated() { group.addTask { (index, try await device.sync()) } }
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                }
                for (index, report) in reports where report.hadCheckpoint && report.modes.contains(where: { $0 != .fast }) {
                    slowAfterCheckpoint.append("round \(round), device \(index): \(report.modes)")
                }
            }
            for kill in kills { try await kill.value }
            for _ in 0..<2 { for device in devices { _ = try await device.sync() } }

            #expect(await servers.kills == 10)
            #expect(slowAfterCheckpoint.isEmpty, "slow syncs forced on devices that had a checkpoint: \(slowAfterCheckpoint)")
            let expected = ledgers.reduce(into: [String: [String: SyncValue]]()) { $0.merge($1.live) { first, _ in first } }
            #expect(expected.count > 50, "the rounds left records to compare: \(expected.count)")
            for (index, device) in devices.enumerated() {
                let held = try await device.liveRecords()
                let byName = Dictionary(grouping: held) { $0["name"]?.stringValue ?? "(no name)" }
                let duplicated = byName.filter { $0.value.count > 1 }.keys.sorted()
                #expect(duplicated.isEmpty, "device \(index) holds records twice: \(duplicated)")
                let missing = Set(expected.keys).subtracting(byName.keys).sorted()
                #expect(missing.isEmpty, "device \(index) lacks \(missing.count) records: \(missing.prefix(10))")
                let extra = Set(byName.keys).subtracting(expected.keys).sorted()
                #expect(extra.isEmpty, "device \(index) holds records deleted or never made: \(extra.prefix(10))")
                let stale = expected.filter { name, fields in byName[name].map { $0.first != fields } ?? false }.keys.sorted()
                #expect(stale.isEmpty, "device \(index) holds an older revision of \(stale.prefix(10))")
            }
            let spread = try servers.nginx.answers(pathPrefix: stack.path)
            #expect(Set(spread.keys) == Set(servers.addresses), "every process answered: \(spread)")
        }
    }

    @Test(
        "an OTA slow sync of 10,000 records spread over the three processes completes while they are killed; a fast sync of 3 dataclasses is then one round trip; a message repeated to another process gets the same answer"
    )
    func otaSlowSyncOverEveryProcess() async throws {
        let limit = 256 * 1024
        try await BalancedServers.with(accounts: ["ada"], arguments: ["--ota-max-message-bytes", String(limit)]) { servers in
            let killer = KillEveryFewRequests(servers, every: 2)
            let transport = HTTPClientTransport(baseURL: servers.url)
                .with(CredentialsMiddleware(.bearer(servers.tokens["ada"]!))).with(killer)
            let store = MemoryStore()
            let records = OTADeviceRecords(store: store, account: "ada")
            try await store.transaction(for: "ada") { tx in
                for index in 0..<10_000 {
                    try await tx.put(
                        SyncRecord(
                            collection: CollectionID(BalancedStack.dataclass), id: RecordID("L\(index)"),
                            fields: OTARecord(
                                entity: BalancedStack.entity,
                                fields: ["name": .string("person \(index)"), "notes": .string(String(repeating: "n", count: index % 100))]
                            ).storedFields,
                            isDeleted: false, version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000), node: OTADeviceRecords.localNode)))
                }
            }
            let phone = OTAClient(
                records: records, deviceID: "phone", transport: transport, codec: MessagePackCodec(),
                dataclasses: BalancedStack.dataclasses, configuration: .init(retry: BalancedDevice.retry, maxMessageBytes: limit))
            let slow = try await phone.sync()
            try await killer.finish()
            #expect(slow.modes[BalancedStack.dataclass] == .slow)
            #expect(slow.sentItems == 10_000)
            #expect(slow.roundTrips >= 6, "the slow sync took several messages: \(slow.roundTrips)")
            #expect(await servers.kills >= 2, "processes were killed during the slow sync")
            let spread = try servers.nginx.answers(pathPrefix: "/ota")
            #expect(Set(spread.keys) == Set(servers.addresses), "every process answered messages of the session: \(spread)")

            // On the server, each record once.
            let names = try await servers.withStore { store in
                try await store.transaction(for: "ada") { tx in
                    try await tx.records(in: CollectionID(BalancedStack.dataclass), after: nil, limit: 100_000)
                        .filter { !$0.record.isDeleted }.map { try OTARecord($0.record).fields["name"]?.stringValue ?? "" }
                }
            }
            #expect(names.count == 10_000)
            #expect(Set(names).count == 10_000)

            // A fast sync of three dataclasses, whichever process answers it: one round trip (no process is
            // killed any more: a retry would count as one more).
            killer.stop()
            let settle = try await phone.sync()
            #expect(Set(settle.modes.values) == [.fast], "the device's checkpoint survived the kills: \(settle.modes)")
            for dataclass in BalancedStack.dataclasses {
                _ = try await records.save(dataclass: dataclass, entity: BalancedStack.entity, fields: ["name": .string("new in \(dataclass)")])
            }
            let fast = try await phone.sync()
            #expect(fast.roundTrips == 1)
            #expect(fast.sentItems == 3)
            #expect(Set(fast.modes.values) == [.fast])

            // A message repeated to another process than the one that answered it: the same answer, applied once.
            let processes = servers.addresses.map { address in
                HTTPClientTransport(baseURL: URL(string: "http://\(address)")!)
                    .with(CredentialsMiddleware(.bearer(servers.tokens["ada"]!)))
            }
            let message = OTAMessage(
                header: OTAHeader(userid: "ada", deviceid: "probe", sequence: 1, isFinal: true),
                body: [
                    .command(OTACommand(
                        name: "sync-start", sequence: 1,
                        params: ["uri": "com.apple.Bookmarks", "anchors": OTAAnchors(mode: .slow, nextDeviceAnchor: "p.1").value])),
                    .command(OTACommand(
                        name: "sync-changes", sequence: 2,
                        params: [
                            "uri": "com.apple.Bookmarks", "itemtype": "records",
                            "items": [
                                "P-1": OTAItem.add(entity: "bookmark", record: ["name": "probe 1"]).value,
                                "P-2": OTAItem.add(entity: "bookmark", record: ["name": "probe 2"]).value,
                            ],
                        ])),
                ])
            func post(to process: Int, session: String?) async throws -> SyncResponse {
                try await processes[process].send(
                    SyncRequest(
                        method: .post, path: "/ota", contentType: "application/json", accept: "application/json",
                        session: session, body: try JSONCodec().encode(message.value)))
            }
            let first = try await post(to: 0, session: nil)
            #expect(first.status == 200)
            let session = try #require(first.session)
            let again = try await post(to: 1, session: session)
            #expect(again.status == 200)
            #expect(again.body == first.body)
            let probes = try await servers.withStore { store in
                try await store.transaction(for: "ada") { tx in
                    try await tx.records(in: "com.apple.Bookmarks", after: nil, limit: 1_000)
                        .compactMap { try OTARecord($0.record).fields["name"]?.stringValue }.filter { $0.hasPrefix("probe") }
                }
            }
            #expect(probes.sorted() == ["probe 1", "probe 2"])
        }
    }
}

// MARK: - Devices

/// The three stacks, as the application uses them.
enum BalancedStack: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case aquasync, appsync, ota

    var testDescription: String { rawValue }

    /// Where `anchorage serve` mounts the stack.
    var path: String {
        switch self {
        case .aquasync: "/deltas"
        case .appsync: "/rest"
        case .ota: "/ota"
        }
    }

    static let model = "Contact"
    /// `anchorage serve`'s default appSync type (primary key `pk`).
    static let appSyncType = "booking"
    static let dataclass = "com.apple.Contacts"
    static let dataclasses = ["com.apple.Contacts", "com.apple.Calendars", "com.apple.Bookmarks"]
    static let entity = "com.apple.contacts.Contact"
}

/// One device of a stack, in process, with a memory store, syncing over HTTP through the balancer.
final class BalancedDevice: Sendable {
    private enum Client: Sendable {
        case aquasync(AquasyncClient)
        case appsync(AppSyncClient)
        case ota(OTAClient, OTADeviceRecords)
    }

    private let client: Client
    /// Whether the device has synced before (OTA: holds a checkpoint).
    private let synced = Mutex(false)

    /// Retries that outlast a process's restart: a request cut by a kill is answered 502 by nginx.
    static let retry = RetryPolicy(maxAttempts: 10, initialDelay: .milliseconds(50), maxDelay: .seconds(1))

    init(_ stack: BalancedStack, number: Int, transport: any SyncClientTransport) {
        let store = MemoryStore()
        // Two codecs, so that one server speaks both to the same account.
        let codec: any SyncCodec = number == 1 ? MessagePackCodec() : JSONCodec()
        switch stack {
        case .aquasync:
            client = .aquasync(AquasyncClient(store: store, transport: transport, codec: codec, configuration: .init(retry: Self.retry)))
        case .appsync:
            client = .appsync(
                AppSyncClient(
                    store: store, transport: transport, codec: codec, types: [AppSyncObjectType(BalancedStack.appSyncType)],
                    configuration: .init(retry: Self.retry)))
        case .ota:
            let records = OTADeviceRecords(store: store, account: "ada")
            client = .ota(
                OTAClient(
                    records: records, deviceID: "device-\(number)", transport: transport, codec: codec,
                    dataclasses: BalancedStack.dataclasses, configuration: .init(retry: Self.retry)),
                records)
        }
    }

    /// Saves a record (`id` nil: a new one) and returns its id.
    func save(id: String?, fields: [String: SyncValue]) async throws -> String {
        switch client {
        case .aquasync(let client): try await client.save(BalancedStack.model, gid: id, fields: fields)
        case .appsync(let client): try await client.save(BalancedStack.appSyncType, guid: id, fields: fields)
        case .ota(_, let records):
            try await records.save(dataclass: BalancedStack.dataclass, luid: id, entity: BalancedStack.entity, fields: fields)
        }
    }

    func delete(id: String) async throws {
        switch client {
        case .aquasync(let client): try await client.delete(BalancedStack.model, gid: id)
        case .appsync(let client): try await client.delete(BalancedStack.appSyncType, guid: id)
        case .ota(_, let records): try await records.delete(dataclass: BalancedStack.dataclass, luid: id)
        }
    }

    /// What a sync reports that the test checks.
    struct Report: Sendable {
        /// Whether the device had synced before this sync.
        var hadCheckpoint: Bool
        /// OTA: the modes the dataclasses synced in.
        var modes: [OTASyncMode]
    }

    func sync() async throws -> Report {
        let hadCheckpoint = synced.withLock { $0 }
        var modes: [OTASyncMode] = []
        switch client {
        case .aquasync(let client): _ = try await client.sync()
        case .appsync(let client): _ = try await client.sync()
        case .ota(let client, _): modes = Array(try await client.sync().modes.values)
        }
        synced.withLock { $0 = true }
        return Report(hadCheckpoint: hadCheckpoint, modes: modes)
    }

    /// The fields of every live record.
    func liveRecords() async throws -> [[String: SyncValue]] {
        switch client {
        case .aquasync(let client): try await client.objects(BalancedStack.model).map(\.fields)
        case .appsync(let client): try await client.objects(BalancedStack.appSyncType).map(\.fields)
        case .ota(_, let records): try await records.records(dataclass: BalancedStack.dataclass).values.map(\.fields)
        }
    }
}

/// What one device's application has been told is saved: its own records by name, with their last
/// fields. Each device edits only records it made, so the last fields of each are known.
struct DeviceLedger {
    private(set) var live: [String: [String: SyncValue]] = [:]
    private var ids: [String: String] = [:]
    private var made = 0

    /// Adds a record, or changes or deletes one of the device's own, at random.
    mutating func edit(on device: BalancedDevice, round: Int, using random: inout SeededGenerator) async throws {
        let owner = device
        let roll = Int.random(in: 0..<10, using: &random)
        if live.count < 3 || roll < 5 {
            made += 1
            let name = "\(UUID().uuidString.prefix(8))-\(made)"
            let fields: [String: SyncValue] = [
                "name": .string(name), "pk": .string(name), "revision": 1, "round": .integer(Int64(round)),
            ]
            ids[name] = try await owner.save(id: nil, fields: fields)
            live[name] = fields
        } else if let name = live.keys.sorted().randomElement(using: &random), let id = ids[name] {
            if roll < 8 {
                var fields = live[name]!
                fields["revision"] = .integer((fields["revision"]?.integerValue ?? 0) + 1)
                fields["round"] = .integer(Int64(round))
                _ = try await owner.save(id: id, fields: fields)
                live[name] = fields
            } else {
                try await owner.delete(id: id)
                live[name] = nil
            }
        }
    }
}

/// Kills one of the processes, in turn, at every `every`-th request that passes, while that request
/// is under way — "a process killed every few seconds", counted in requests rather than timed.
final class KillEveryFewRequests: SyncClientMiddleware {
    private let servers: BalancedServers
    private let every: Int
    private let state = Mutex((requests: 0, kills: [Task<Void, any Error>](), stopped: false))

    init(_ servers: BalancedServers, every: Int) {
        self.servers = servers
        self.every = every
    }

    func intercept(
        _ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        let servers = servers
        let every = every
        state.withLock { state in
            state.requests += 1
            if state.requests % every == 0, !state.stopped { state.kills.append(Task { try await servers.killNext() }) }
        }
        return try await next(request)
    }

    /// Kills no more.
    func stop() { state.withLock { $0.stopped = true } }

    /// Waits for the kills started so far (and their restarts).
    func finish() async throws {
        for kill in state.withLock({ $0.kills }) { try await kill.value }
    }
}
