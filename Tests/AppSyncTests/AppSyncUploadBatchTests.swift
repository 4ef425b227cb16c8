import AppSync
import SyncCore
import SyncJSON
import SyncTesting
import Testing

/// More pending changes than one update carries go up in several updates, each settled as its answer comes.
struct AppSyncUploadBatchTests {
    static let type = AppSyncObjectType("contact", primaryKey: [])
    let serverStore = MemoryStore()
    let requests = CountingMiddleware()

    /// A client with updates of `updateSize` objects, on a server whose store keeps at most `quota` records.
    func client(updateSize: Int, quota: Int, store: any SyncStore) -> AppSyncClient {
        let server = AppSyncServer(
            store: QuotaStore(base: serverStore, limits: .init(records: quota)), codecs: CodecSet([JSONCodec()]), types: [Self.type])
        let transport = LoopbackTransport(
            service: ServiceRouter().mounting(server, at: "/rest"), authenticator: SingleAccountAuthenticator(account: "ada")
        ).with(requests)
        return AppSyncClient(
            store: store, transport: transport, codec: JSONCodec(), types: [Self.type],
            configuration: .init(retry: .none, updateSize: updateSize))
    }

    @Test("7 changes with updates of 3 go up in 3 updates, and the device moves past its own writes")
    func changesGoUpInUpdatesOfTheConfiguredSize() async throws {
        let device = client(updateSize: 3, quota: 1_000, store: MemoryStore())
        try await device.save("contact", (0..<7).map { (guid: nil, fields: ["n": .integer(Int64($0))]) })

        let report = try await device.sync()
        #expect(report.uploaded == 7)
        #expect(requests.counts(for: "/rest/contact/update").requests == 3)
        #expect(try await pendingChanges(of: device).isEmpty)
        #expect(try await device.counters("contact").serverCounterLastSync == 7)

        requests.reset()
        #expect(try await device.sync().downloaded == 0)
        #expect(requests.total.requests == 1, "one list, and no object of its own came back")
    }

    @Test("an upload cut short by the server keeps what was not taken, and the next sync sends only that")
    func anUploadCutShortResumesWithTheRest() async throws {
        let store = MemoryStore()
        let full = client(updateSize: 2, quota: 3, store: store)
        let guids = try await full.save("contact", (0..<5).map { (guid: nil, fields: ["n": .integer(Int64($0))]) })

        // The first update fits the quota; the second would pass it, so the server answers 507 and applies nothing of it.
        let error = await #expect(throws: SyncClientError.self) { try await full.sync() }
        #expect(error?.status == 507)
        #expect(Set(try await pendingChanges(of: full).map(\.key.id.rawValue)) == Set(guids[2...]))

        requests.reset()
        let roomy = client(updateSize: 2, quota: 1_000, store: store)
        #expect(try await roomy.sync().uploaded == 3)
        #expect(requests.counts(for: "/rest/contact/update").requests == 2)
        #expect(try await pendingChanges(of: roomy).isEmpty)
        let onServer = try await serverStore.changes(for: "ada", after: .start, in: nil, limit: 100).records
        #expect(onServer.count == 5)
        #expect(Set(onServer.map(\.record.key.id.rawValue)) == Set(guids))
    }
}
