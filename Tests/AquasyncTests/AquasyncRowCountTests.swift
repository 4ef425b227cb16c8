import Aquasync
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
struct AquasyncRowCountTests {
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
        let folder = try TemporaryFolder("aquasync-rows")
        let serverStore = RowCountingStore(try SQLiteStore(path: folder.path("server.sqlite")))
        let router = ServiceRouter().mounting(AquasyncServer(store: serverStore, codecs: CodecSet([JSONCodec()])), at: "/deltas")
        let requests = CountingMiddleware()
        let transport = LoopbackTransport(service: router, authenticator: SingleAccountAuthenticator(account: "ada")).with(requests)
        func device(_ name: String) throws -> (AquasyncClient, RowCountingStore) {
            let store = RowCountingStore(try SQLiteStore(path: folder.path(name)))
            return (AquasyncClient(store: store, transport: transport, codec: JSONCodec()), store)
        }
        let (writer, writerStore) = try device("writer.sqlite")
        let (reader, readerStore) = try device("reader.sqlite")

        let gids = try await writer.records.save(
            "Contact", (0..<Self.records).map { (gid: nil, fields: ["name": .string("contact \($0)"), "n": .integer(Int64($0))]) })
        #expect(try await writer.sync().pushed == Self.records)
        #expect(try await reader.sync().pulled == Self.records)

        let edited = Array(gids.shuffled().prefix(Self.edits))
        for gid in edited { _ = try await writer.save("Contact", gid: gid, fields: ["name": "edited", "n": 0]) }
        // Aquasync keeps a model's objects in the collection `aquasync/MODEL`, named by gid.
        let editedKeys = Set(edited.map { RecordKey(collection: "aquasync/Contact", id: RecordID($0)) })

        // The writer sends its ten edits and, moving past its own writes, has nothing to pull: one request.
        let push = try await RowCountingStore.cost(of: { try await writer.sync() }, requests: requests, stores: serverStore, writerStore)
        #expect(push.result.pushed == Self.edits && push.result.pulled == 0)
        #expect(push.requests == 1)
        #expect(push.counts[0].keys.isSubset(of: editedKeys) && push.counts[1].keys.isSubset(of: editedKeys), "\(push.counts)")
        #expect(push.counts.allSatisfy { $0.rows <= 3 * Self.edits }, "\(push.counts)")
        #expect(push.counts.allSatisfy { $0.metadataElements <= 10 * Self.edits }, "\(push.counts)")

        // The reader gets exactly the ten edits.
        let pull = try await RowCountingStore.cost(of: { try await reader.sync() }, requests: requests, stores: serverStore, readerStore)
        #expect(pull.result.pulled == Self.edits)
        #expect(pull.requests <= 2)
        #expect(pull.counts[0].keys == editedKeys && pull.counts[1].keys.isSubset(of: editedKeys), "\(pull.counts)")
        #expect(pull.counts.allSatisfy { $0.rows <= 3 * Self.edits }, "\(pull.counts)")
        #expect(pull.counts.allSatisfy { $0.metadataElements <= 10 * Self.edits }, "\(pull.counts)")
    }
}
