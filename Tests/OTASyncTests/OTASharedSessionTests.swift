import Foundation
import OTASync
import SyncCore
import SyncJSON
import SyncSQLite
import SyncTesting
import Synchronization
import TestSupport
import Testing

/// Several `OTAServer`s on one store, as several server processes on one database: a session
/// started by one is continued by another, and a repeated message gets the answer the first
/// server gave, applied once.
@Suite("OTA sessions shared by servers on one store")
struct OTASharedSessionTests {
    /// The stores two servers can share in one process.
    enum SharedStore: String, CaseIterable, CustomStringConvertible {
        case memory, sqlite
        var description: String { rawValue }

        func make(in folder: TemporaryFolder) throws -> any SyncStore {
            switch self {
            case .memory: MemoryStore()
            case .sqlite: try SQLiteStore(path: folder.path("server.sqlite"))
            }
        }
    }

    static func server(on store: any SyncStore, maxMessageBytes: Int = 1 << 20) -> OTAServer {
        OTAServer(store: store, codecs: TestCodec.otaServerCodecs, dataclasses: Set(Dataclass.all), maxMessageBytes: maxMessageBytes)
    }

    @Test("a session continued by a second OTAServer on the same store: every message goes to the other server", arguments: SharedStore.allCases)
    func sessionContinuedByAnotherServer(store kind: SharedStore) async throws {
        let folder = try TemporaryFolder("ota-shared-session")
        let store = try kind.make(in: folder)
        // Devices keep their messages well under the servers' limit, as docs/ota.md advises.
        let (limit, serverLimit) = (8_192, 16_384)
        let balancer = RoundRobinService([
            Self.server(on: store, maxMessageBytes: serverLimit), Self.server(on: store, maxMessageBytes: serverLimit),
        ])
        let harness = OTAHarness()
        let transport = OTAHarness.loopback(to: balancer)
        let phone = harness.device("phone", through: transport, maxMessageBytes: limit)
        for index in 0..<240 {
            try await phone.add(["first name": .string("Person \(index)"), "notes": .string(String(repeating: "n", count: index))])
        }
        try await phone.add(["title": "Dentist"], in: Dataclass.calendars)

        let first = try await phone.sync()
        #expect(first.modes[Dataclass.contacts] == .slow)
        #expect(first.sentItems == 241)
        #expect(first.roundTrips > 4, "the pull took several messages: \(first.roundTrips)")
        let laptop = harness.device("laptop", codec: .json, through: transport, maxMessageBytes: limit)
        let received = try await laptop.sync()
        #expect(received.receivedItems == 241)
        #expect(received.roundTrips > 3, "the push took several messages: \(received.roundTrips)")
        #expect(try await laptop.contents() == phone.contents())
        #expect(try await laptop.contents(Dataclass.calendars) == phone.contents(Dataclass.calendars))
        #expect(balancer.answered.allSatisfy { $0 > 5 }, "both servers answered: \(balancer.answered)")

        // A pull that finished before the mingle leaves the device's changes pending: they go once more.
        _ = try await phone.sync()
        _ = try await laptop.sync()
        // A fast sync of three dataclasses is still one round trip, whichever server answers it.
        try await phone.add(["first name": "Ada"])
        try await phone.add(["title": "Lunch"], in: Dataclass.calendars)
        try await phone.add(["url": "https://example.org"], in: Dataclass.bookmarks)
        let fast = try await phone.sync()
        #expect(fast.roundTrips == 1)
        #expect(Set(fast.modes.values) == [.fast])
        #expect(fast.sentItems == 3)
        let fastReceived = try await laptop.sync()
        #expect(fastReceived.roundTrips == 1)
        #expect(fastReceived.receivedItems == 3)
        for dataclass in Dataclass.all {
            #expect(try await laptop.contents(dataclass) == phone.contents(dataclass), "\(dataclass)")
        }
    }

    @Test("a repeated message answered by another server gets the same answer, byte for byte, and is applied once", arguments: SharedStore.allCases)
    func repeatAnsweredByAnotherServer(store kind: SharedStore) async throws {
        let folder = try TemporaryFolder("ota-shared-repeat")
        let store = try kind.make(in: folder)
        let (first, second) = (Sender(Self.server(on: store)), Sender(Self.server(on: store)))

        let one = try Wire.message(1, [
            Wire.start(Dataclass.contacts, 1, mode: .slow),
            Wire.changes(Dataclass.contacts, 2, ["L-1": Wire.add("Ada"), "L-2": Wire.add("Bo")]),
        ])
        let answer = try await first.post(one)
        let cookie = try #require(answer.session)
        #expect(try OTAMessage(JSONCodec().decode(answer.body)).responses.map(\.status) == [.ok, .ok])
        let applied = try await Snapshot(store)
        #expect(applied.records.count == 2)

        let repeated = try await second.post(one, session: cookie)
        #expect(repeated.status == 200)
        #expect(repeated.body == answer.body)
        #expect(repeated.session == cookie)
        #expect(try await Snapshot(store) == applied)

        // The session goes on at the other server, and the first answers the repeats of its messages too.
        let two = try Wire.message(2, [])
        let next = try await second.post(two, session: cookie)
        #expect(try OTAMessage(JSONCodec().decode(next.body)).header.sequence == 2)
        for (label, bytes, expected) in [("message 2", two, next), ("message 1", one, answer)] {
            let again = try await first.post(bytes, session: cookie)
            #expect(again.body == expected.body, "\(label)")
        }
        #expect(try await Snapshot(store) == applied)
    }

    @Test("the same message processed by two servers at once: one answer is kept, sent by both, and applied once")
    func sameMessageOnTwoServersAtOnce() async throws {
        let store = MemoryStore()
        let first = Sender(Self.server(on: store))
        let items = (0..<9).map { "L-\($0)" }
        func fragment(_ sequence: Int, _ ids: ArraySlice<String>, more: Bool) -> OTABodyEntry {
            Wire.changes(Dataclass.contacts, sequence, Dictionary(uniqueKeysWithValues: ids.map { ($0, Wire.add($0)) }), more: more)
        }
        let opening = try await first.post(try Wire.message(1, [
            Wire.start(Dataclass.contacts, 1, mode: .slow), fragment(2, items[0..<3], more: true),
        ]))
        let cookie = try #require(opening.session)

        // Message 2, a fragment: the second server reads the session, then the first answers the message
        // while the second still works on it. The second finds an answer kept when it comes to keep its own.
        // Message 3, the last fragment: the second finds the items it was to mingle taken by the first.
        for (sequence, ids, more) in [(2, items[3..<6], true), (3, items[6..<9], false)] {
            let bytes = try Wire.message(sequence, [fragment(2, ids, more: more)])
            let gated = GatedStore(store, holding: 2)
            let second = Sender(Self.server(on: gated))
            let late = Task { try await second.post(bytes, session: cookie) }
            await gated.waitUntilHeld()
            let answer = try await first.post(bytes, session: cookie)
            let afterFirst = try await Snapshot(store)
            gated.release()
            let lateAnswer = try await late.value
            #expect(lateAnswer.status == 200, "message \(sequence)")
            #expect(lateAnswer.body == answer.body, "message \(sequence)")
            #expect(try await Snapshot(store) == afterFirst, "message \(sequence)")
        }
        let stored = try await Snapshot(store)
        #expect(stored.records.map(\.record.fields).count == 9)
        #expect(Set(try stored.records.map { try OTARecord($0.record).fields["first name"] }) == Set(items.map(SyncValue.string)))

        // The session goes on from the kept answer.
        let four = try await first.post(try Wire.message(4, []), session: cookie)
        let message = try OTAMessage(JSONCodec().decode(four.body))
        #expect(message.header.result == nil)
        #expect(message.header.sequence == 4)
    }

    @Test("a cookie that is no session id names no session: message 1 starts a new one, a later message is E_StateError")
    func cookieThatIsNoSessionID() async throws {
        let store = MemoryStore()
        let sender = Sender(Self.server(on: store))
        for cookie in ["bad\u{0}cookie", String(repeating: "a", count: 10_000), "ota-session=x; Path=/", ""] {
            let later = try await sender.post(try Wire.message(2, []), session: cookie)
            #expect(later.status == 200)
            #expect(try OTAMessage(JSONCodec().decode(later.body)).header.result?.map(\.status) == [.stateError])
            let first = try await sender.post(try Wire.message(1, [Wire.start(Dataclass.contacts, 1, mode: .slow)]), session: cookie)
            #expect(try OTAMessage(JSONCodec().decode(first.body)).header.result == nil)
            #expect(first.session.map { UUID(uuidString: $0) != nil } == true, "\(String(describing: first.session))")
        }
    }

    @Test("a device's new session removes its finished sessions from the store")
    func finishedSessionsAreRemoved() async throws {
        let store = MemoryStore()
        let cookies = CookieRecorder()
        let phone = OTAHarness().device("phone", through: OTAHarness.loopback(to: Self.server(on: store)).with(cookies))
        try await phone.add(["first name": "Ada"])
        try await phone.sync()
        try await phone.add(["first name": "Bo"])
        try await phone.sync()
        let sessions = cookies.sessions
        #expect(sessions.count == 2, "\(sessions)")
        func stored(_ session: String, _ key: String) async throws -> SyncValue? {
            try await store.transaction(for: "ada") { tx in try await tx.metadata(key, for: PeerID("ota-session:\(session)")) }
        }
        let (first, second) = (try #require(sessions.first), try #require(sessions.last))
        #expect(try await stored(first, "ota.session") == nil)
        #expect(try await stored(first, "ota.session.reply.1") == nil)
        #expect(try await stored(second, "ota.session") != nil)
        #expect(try await stored(second, "ota.session.reply.1") != nil)
    }
}

// MARK: - Helpers

/// Notes the sessions the server's answers name, in order.
final class CookieRecorder: SyncClientMiddleware {
    private let seen = Mutex<[String]>([])

    var sessions: [String] { seen.withLock { $0 } }

    func intercept(_ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse) async throws -> SyncResponse {
        let response = try await next(request)
        if let session = response.session { seen.withLock { if $0.last != session { $0.append(session) } } }
        return response
    }
}

/// Hands each request to the next of several services in turn, as a load balancer without
/// stickiness does, and counts what each answered.
final class RoundRobinService: SyncService {
    private let services: [any SyncService]
    private let counts: Mutex<[Int]>

    init(_ services: [any SyncService]) {
        self.services = services
        counts = Mutex(Array(repeating: 0, count: services.count))
    }

    /// How many requests each service answered.
    var answered: [Int] { counts.withLock { $0 } }

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        let index = counts.withLock { counts in
            let index = counts.reduce(0, +) % counts.count
            counts[index] += 1
            return index
        }
        return try await services[index].handle(request, context: context)
    }
}

/// A store that holds its `n`-th transaction back until the test releases it: a server
/// process that stalls in the middle of a message.
final class GatedStore: SyncStore {
    private let base: any SyncStore
    private let held: Int
    private let count = Mutex(0)
    private let reached = AsyncStream<Void>.makeStream()
    private let gate = AsyncStream<Void>.makeStream()

    init(_ base: any SyncStore, holding transaction: Int) {
        self.base = base
        self.held = transaction
    }

    /// Returns once the held transaction is waiting.
    func waitUntilHeld() async {
        for await _ in reached.stream { return }
    }

    /// Lets the held transaction go on.
    func release() { gate.continuation.yield() }

    func transaction<Result: Sendable>(
        for account: AccountID, _ body: @Sendable (any StoreTransaction) async throws -> Result
    ) async throws -> Result {
        if count.withLock({ count in
            count += 1
            return count == held
        }) {
            reached.continuation.yield()
            for await _ in gate.stream { break }
        }
        return try await base.transaction(for: account, body)
    }

    func changes(for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int)
        async throws -> ChangeBatch
    {
        try await base.changes(for: account, after: position, in: collections, limit: limit)
    }

    func latestPosition(for account: AccountID) async throws -> ChangePosition {
        try await base.latestPosition(for: account)
    }
}

/// Posts JSON messages to one server as `ada`.
private struct Sender {
    let transport: any SyncClientTransport

    init(_ server: OTAServer) { transport = OTAHarness.loopback(to: server) }

    func post(_ bytes: [UInt8], session: String? = nil) async throws -> SyncResponse {
        try await transport.send(
            SyncRequest(
                method: .post, path: "/ota", contentType: "application/json", accept: "application/json", session: session,
                body: bytes))
    }
}

/// Messages of the device `phone` of `ada`, in JSON.
private enum Wire {
    static func message(_ sequence: Int, _ body: [OTABodyEntry]) throws -> [UInt8] {
        let header = OTAHeader(userid: "ada", deviceid: "phone", sequence: sequence, isFinal: true)
        return try JSONCodec().encode(OTAMessage(header: header, body: body).value)
    }

    static func start(_ uri: String, _ sequence: Int, mode: OTASyncMode) -> OTABodyEntry {
        .command(OTACommand(
            name: "sync-start", sequence: sequence,
            params: ["uri": .string(uri), "anchors": OTAAnchors(mode: mode, nextDeviceAnchor: "d1.1").value]))
    }

    static func changes(_ uri: String, _ sequence: Int, _ items: [String: SyncValue], more: Bool = false) -> OTABodyEntry {
        .command(OTACommand(
            name: "sync-changes", sequence: sequence,
            params: ["uri": .string(uri), "itemtype": "records", "items": .dictionary(items)], more: more))
    }

    static func add(_ name: String) -> SyncValue {
        OTAItem.add(entity: Dataclass.contact, record: ["first name": .string(name)]).value
    }
}

/// The server's records of `ada`, with their positions, and its latest position.
private struct Snapshot: Equatable {
    var records: [StoredRecord]
    var latest: ChangePosition

    init(_ store: any SyncStore) async throws {
        records = try await store.changes(for: "ada", after: .start, in: nil, limit: 100_000).records
        latest = try await store.latestPosition(for: "ada")
    }
}
