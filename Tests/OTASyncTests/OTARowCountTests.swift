import OTASync
import SyncCore
import SyncJSON
import SyncSQLite
import SyncTesting
import Testing
import TestSupport

/// An incremental sync costs what changed, not what the account holds.
///
/// The account holds 100,000 records, as the performance target says; the bounds below do not depend on
/// how many it holds, so a sync that read even a small part of them (a scan of the dataclass, the id map
/// as one value) would pass them by thousands and fail. Ten edits must cost at most two requests and
/// return at most ten distinct records (OTA names a record by the device's LUID on the device and the
/// server's GUID on the server, so the test counts distinct records rather than comparing keys), and
/// read at most 100 metadata elements (RowCountingStore's count), on the server and on both devices.
struct OTARowCountTests {
    static let records = 100_000
    static let edits = 10
    static let dataclass = "com.apple.Contacts"
    static let entity = "com.apple.contacts.Contact"

    @Test(
        "after 100,000 records, a sync of 10 edits takes at most 2 requests and reads only the edited records and their bookkeeping",
        // Slow: filling the account with 100,000 records keeps a core busy for a minute or more in a debug
        // build, so the test runs only when ANCHORAGE_SLOW_TESTS asks for it (scripts/test.sh and CI do).
        .enabled(if: SlowTests.enabled, "slow: fills 100,000 records (a minute or more); \(SlowTests.howToRun)"))
    func incrementalSyncReadsOnlyTheEdits() async throws {
        try await LargeDataTurn.gate.run { try await fillThenSyncTenEdits() }
    }

    /// Fills the account, edits ten records, and checks the writer's and the reader's incremental syncs.
    private func fillThenSyncTenEdits() async throws {
        let folder = try TemporaryFolder("ota-rows")
        // The device's record of what it last synced (`ota-synced:DATACLASS`) is bookkeeping, as the journal is.
        let bookkeeping: @Sendable (CollectionID) -> Bool = {
            $0.rawValue.hasPrefix("anchorage.") || $0.rawValue.hasPrefix("ota-synced:") || $0.rawValue.hasPrefix("_")
        }
        let serverStore = RowCountingStore(try SQLiteStore(path: folder.path("server.sqlite")), ignoring: bookkeeping)
        let server = OTAServer(store: serverStore, codecs: CodecSet([JSONCodec()]), dataclasses: [Self.dataclass])
        let requests = CountingMiddleware()
        let transport = LoopbackTransport(
            service: ServiceRouter().mounting(server, at: "/ota"), authenticator: SingleAccountAuthenticator(account: "ada")
        ).with(requests)
        func device(_ id: String) throws -> (OTADeviceRecords, OTAClient, RowCountingStore) {
            let store = RowCountingStore(try SQLiteStore(path: folder.path(id + ".sqlite")), ignoring: bookkeeping)
            let records = OTADeviceRecords(store: store, account: "ada")
            let client = OTAClient(records: records, deviceID: id, transport: transport, codec: JSONCodec(), dataclasses: [Self.dataclass])
            return (records, client, store)
        }
        let (writerRecords, writer, writerStore) = try device("writer")
        let (_, reader, readerStore) = try device("reader")

        let luids = try await writerRecords.save(
            dataclass: Self.dataclass,
            (0..<Self.records).map { (luid: nil, entity: Self.entity, fields: ["name": .string("contact \($0)"), "n": .integer(Int64($0))]) })
        #expect(try await writer.sync().sentItems == Self.records)
        #expect(try await reader.sync().receivedItems == Self.records)
        _ = try await writer.sync()  // the writer's id map goes with its next sync (defersIDMap)
        _ = try await reader.sync()

        for luid in luids.shuffled().prefix(Self.edits) {
            _ = try await writerRecords.save(dataclass: Self.dataclass, luid: luid, entity: Self.entity, fields: ["name": "edited", "n": 0])
        }

        let push = try await RowCountingStore.cost(of: { try await writer.sync() }, requests: requests, stores: serverStore, writerStore)
        #expect(push.result.sentItems == Self.edits)
        #expect(push.requests <= 2)
        #expect(push.counts.allSatisfy { $0.keys.count <= Self.edits && $0.rows <= 3 * Self.edits }, "\(push.counts)")
        #expect(push.counts.allSatisfy { $0.metadataElements <= 10 * Self.edits }, "\(push.counts)")

        let pull = try await RowCountingStore.cost(of: { try await reader.sync() }, requests: requests, stores: serverStore, readerStore)
        #expect(pull.result.receivedItems == Self.edits)
        #expect(pull.requests <= 2)
        #expect(pull.counts[0].keys.count == Self.edits, "\(pull.counts)")
        #expect(pull.counts.allSatisfy { $0.keys.count <= Self.edits && $0.rows <= 3 * Self.edits }, "\(pull.counts)")
        #expect(pull.counts.allSatisfy { $0.metadataElements <= 10 * Self.edits }, "\(pull.counts)")
    }
}
