import Foundation
import OTASync
import Synchronization
import SyncCore
import SyncTesting
import SyncXMLPlist
import TestSupport
import Testing

/// Records every request and the answer it got, bodies included.
final class TraceRecorder: SyncClientMiddleware, Sendable {
    /// One request and its answer.
    struct Exchange: Sendable {
        var request: SyncRequest
        var response: SyncResponse
    }

    private let recorded = Mutex<[Exchange]>([])

    /// What passed, in order.
    var exchanges: [Exchange] { recorded.withLock { $0 } }

    /// Forgets what passed so far.
    func reset() { recorded.withLock { $0 = [] } }

    func intercept(
        _ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        let response = try await next(request)
        recorded.withLock { $0.append(Exchange(request: request, response: response)) }
        return response
    }
}

/// The message trace of `docs/ota.md`, taken from the code. Set `OTA_TRACE_DIR`
/// to a folder to get the XML bodies of the fast sync (`fast-sync-request.xml`,
/// `fast-sync-answer.xml`) and of the next session's first message
/// (`next-session-request.xml`) written there.
@Suite("OTA message trace")
struct OTATraceTests {
    @Test("a fast sync with one change in contacts is one round trip of XML plists; the next session delivers the deferred idmap")
    func fastSyncTrace() async throws {
        let harness = OTAHarness()
        let trace = TraceRecorder()
        func device(_ id: String) -> Device {
            let records = OTADeviceRecords(store: MemoryStore(), account: harness.account)
            return Device(
                records: records,
                client: OTAClient(
                    records: records, deviceID: id, transport: harness.loopback.with(trace), codec: XMLPlistCodec(),
                    dataclasses: [Dataclass.contacts]))
        }
        let phone = device("phone")
        let laptop = device("laptop")

        // First syncs: each device brings one contact.
        let ada = try await phone.add(["first name": "Ada", "last name": "Lovelace"])
        #expect(try await phone.sync().modes[Dataclass.contacts] == .slow)
        try await laptop.add(["first name": "Grace", "last name": "Hopper"])
        #expect(try await laptop.sync().modes[Dataclass.contacts] == .slow)

        // The fast sync: the phone changes Ada and gets Grace.
        try await phone.records.save(
            dataclass: Dataclass.contacts, luid: ada, entity: Dataclass.contact,
            fields: ["first name": "Ada", "last name": "King"])
        trace.reset()
        let report = try await phone.sync()
        #expect(report.modes[Dataclass.contacts] == .fast)
        #expect(report.roundTrips == 1)
        #expect(report.sentItems == 1)
        #expect(report.receivedItems == 1)

        let exchanges = trace.exchanges
        try #require(exchanges.count == 1, "the fast sync took \(exchanges.count) requests")
        let exchange = exchanges[0]
        #expect(exchange.request.path == "/ota")
        #expect(exchange.request.contentType == "text/xml")
        #expect(exchange.response.contentType == "text/xml")
        #expect(exchange.request.body.starts(with: Array("<?xml".utf8)))
        #expect(exchange.response.body.starts(with: Array("<?xml".utf8)))

        // The device's message: sync-start and sync-changes with its one change.
        let request = try OTAMessage(try XMLPlistCodec().decode(exchange.request.body))
        #expect(request.header.sequence == 1)
        #expect(request.header.isFinal)
        #expect(request.responses.isEmpty)
        #expect(request.commands.map(\.name) == ["sync-start", "sync-changes"])
        let start = try #require(request.commands.first)
        let startAnchors = try OTAAnchors(try #require(start.params["anchors"]))
        #expect(startAnchors.mode == .fast)
        #expect(startAnchors.lastServerAnchor != nil)
        let sent = try #require(request.commands.last?.params["items"]?.dictionaryValue)
        #expect(Array(sent.keys) == [ada])
        let change = try OTAItem(try #require(sent[ada]), key: ada, itemType: .records)
        #expect(change.operation == .modify)
        #expect(change.record == ["first name": "Ada", "last name": "King"])

        // The server's answer: the responses, its changes and its commit, final.
        let answer = try OTAMessage(try XMLPlistCodec().decode(exchange.response.body))
        #expect(answer.header.isFinal)
        #expect(answer.header.sequence == 1)
        let entries = answer.body.map { entry -> String in
            switch entry {
            case .response(let response): "response \(response.name) \(response.status?.name ?? "none")"
            case .command(let command): "command \(command.name)"
            }
        }
        #expect(entries == ["response sync-start S_OK", "response sync-changes S_OK", "command sync-changes", "command sync-commit"])
        let pushed = try #require(answer.commands.first)
        #expect(pushed.more == false)
        let received = try #require(pushed.params["items"]?.dictionaryValue)
        try #require(received.count == 1, "\(received)")
        let (graceKey, graceValue) = try #require(received.first)
        #expect(UUID(uuidString: graceKey) != nil, "a record the phone has no LUID for is keyed by the server's id: \(graceKey)")
        let grace = try OTAItem(graceValue, key: graceKey, itemType: .records)
        #expect(grace.operation == .add)
        #expect(grace.record == ["first name": "Grace", "last name": "Hopper"])
        let pushedAnchor = try OTAAnchors(try #require(pushed.params["anchors"])).nextServerAnchor
        let commit = try #require(answer.commands.last)
        let commitAnchors = try OTAAnchors(try #require(commit.params["anchors"]))
        #expect(commitAnchors.mode == .fast)
        #expect(commitAnchors.nextServerAnchor != nil)
        #expect(commitAnchors.nextServerAnchor == pushedAnchor)
        #expect(
            try await phone.contents()
                == sorted([
                    OTARecord(entity: Dataclass.contact, fields: ["first name": "Ada", "last name": "King"]),
                    OTARecord(entity: Dataclass.contact, fields: ["first name": "Grace", "last name": "Hopper"]),
                ]))

        // The phone's id for Grace was deferred: the next session's first sync-changes carries it.
        let phoneRecords = try await phone.records.records(dataclass: Dataclass.contacts)
        let graceLUID = try #require(phoneRecords.first { $0.value.fields["first name"] == "Grace" }?.key)
        trace.reset()
        let next = try await phone.sync()
        #expect(next.roundTrips == 1)
        let nextExchanges = trace.exchanges
        try #require(nextExchanges.count == 1, "the next sync took \(nextExchanges.count) requests")
        let nextRequest = try OTAMessage(try XMLPlistCodec().decode(nextExchanges[0].request.body))
        let nextChanges = try #require(nextRequest.commands.last)
        #expect(nextChanges.name == "sync-changes")
        #expect(nextChanges.params["idmap"] == [graceKey: .string(graceLUID)])
        #expect(nextChanges.params["items"] == .dictionary([:]))

        if let folder = ProcessInfo.processInfo.environment["OTA_TRACE_DIR"], !folder.isEmpty {
            let directory = URL(fileURLWithPath: folder, isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(exchange.request.body).write(to: directory.appendingPathComponent("fast-sync-request.xml"))
            try Data(exchange.response.body).write(to: directory.appendingPathComponent("fast-sync-answer.xml"))
            try Data(nextExchanges[0].request.body).write(to: directory.appendingPathComponent("next-session-request.xml"))
        }
    }
}
