import AppSync
import SyncCore
import SyncJSON
import SyncSQLite
import SyncTesting
import Testing
import TestSupport

/// An incremental sync costs what changed, not what the account holds.
///
/// The account holds 100,000 records, as the performance target says; the bounds below do not depend on
/// how many it holds, so a sync that read even a small part of them (a scan of the writer's own records,
/// a page of the collection, a metadata value holding an entry per record) would pass them by thousands
/// and fail. Ten edits must cost at most two requests, return no other record than the ten edited, and
/// read at most 100 metadata elements (RowCountingStore's count), on the server and on both devices.
struct AppSyncRowCountTests {
    static let records = 100_000
    static let edits = 10

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
        let folder = try TemporaryFolder("appsync-rows")
        let serverStore = RowCountingStore(try SQLiteStore(path: folder.path("server.sqlite")))
        let type = AppSyncObjectType("contact")
        let server = AppSyncServer(store: serverStore, codecs: CodecSet([JSONCodec()]), types: [type])
        let router = ServiceRouter().mounting(server, at: "/rest")
        let requests = CountingMiddleware()
        let transport = LoopbackTransport(service: router, authenticator: SingleAccountAuthenticator(account: "ada")).with(requests)
        func device(_ name: String) throws -> (AppSyncClient, RowCountingStore) {
            let store = RowCountingStore(try SQLiteStore(path: folder.path(name)))
            return (AppSyncClient(store: store, transport: transport, codec: JSONCodec(), types: [type]), store)
        }
        let (writer, writerStore) = try device("writer.sqlite")
        let (reader, readerStore) = try device("reader.sqlite")

        let guids = try await writer.save(
            "contact", (0..<Self.records).map { (guid: nil, fields: ["pk": .integer(Int64($0)), "name": .string("contact \($0)")]) })
        #expect(try await writer.sync().uploaded == Self.records)
        #expect(try await reader.sync().downloaded == Self.records)

        let edited = Array(guids.enumerated().shuffled().prefix(Self.edits))
        for (index, guid) in edited {
            try await writer.save("contact", guid: guid, fields: ["pk": .integer(Int64(index)), "name": "edited"])
        }
        // appSync keeps a type's objects in the collection `appsync/TYPE`, named by guid.
        let editedKeys = Set(edited.map { RecordKey(collection: "appsync/contact", id: RecordID($0.element)) })

        // The writer sends its ten edits and, moving past its own writes (servercounter_before), has nothing to download.
        let push = try await RowCountingStore.cost(of: { try await writer.sync() }, requests: requests, stores: serverStore, writerStore)
        #expect(push.result.uploaded == Self.edits && push.result.downloaded == 0)
        #expect(push.requests <= 2)
        #expect(push.counts[0].keys.isSubset(of: editedKeys) && push.counts[1].keys.isSubset(of: editedKeys), "\(push.counts)")
        #expect(push.counts.allSatisfy { $0.rows <= 3 * Self.edits }, "\(push.counts)")
        #expect(push.counts.allSatisfy { $0.metadataElements <= 10 * Self.edits }, "\(push.counts)")

        // The reader gets exactly the ten edits.
        let pull = try await RowCountingStore.cost(of: { try await reader.sync() }, requests: requests, stores: serverStore, readerStore)
        #expect(pull.result.downloaded == Self.edits)
        #expect(pull.requests <= 2)
        #expect(pull.counts[0].keys == editedKeys && pull.counts[1].keys.isSubset(of: editedKeys), "\(pull.counts)")
        #expect(pull.counts.allSatisfy { $0.rows <= 3 * Self.edits }, "\(pull.counts)")
        #expect(pull.counts.allSatisfy { $0.metadataElements <= 10 * Self.edits }, "\(pull.counts)")
    }
}
