import AppSync
import SyncCore
import SyncTesting
import Synchronization
import Testing

@Suite("appSync under a faulty network")
struct AppSyncFaultTests {
    @Test("3 clients making random edits, deletes and primary-key collisions over 200 rounds converge with nothing lost")
    func clientsConvergeUnderFaults() async throws {
        let harness = AppSyncHarness()
        let faultsOn = Mutex(true)
        let faults = FaultInjectingMiddleware(
            plan: .random(seed: 11, probability: 0.25, faults: [.drop, .duplicate, .cutAfterProcessing, .serverError(status: 503)]),
            appliesTo: { _ in faultsOn.withLock { $0 } })
        let transport = harness.loopback().with(faults)
        let clients = (0..<3).map { _ in harness.client(transport, conflictPolicy: NewestWinsPolicy()) }
        var random = SeededGenerator(seed: 3)
        var created: Set<String> = []

        for round in 0..<200 {
            harness.clock.advance()
            let client = clients[Int.random(in: 0..<3, using: &random)]
            let live = try await client.objects("booking")
            let primaryKey = SyncValue.string("day-\(Int.random(in: 0..<25, using: &random))")
            do {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4 where !live.isEmpty:
                    var object = live.randomElement(using: &random)!
                    object.fields["value"] = .integer(Int64(round))
                    try await client.save("booking", guid: object.guid, fields: object.fields)
                case 4 where !live.isEmpty:
                    try await client.delete("booking", guid: live.randomElement(using: &random)!.guid)
                default:
                    created.insert(try await client.save("booking", fields: ["pk": primaryKey, "value": .integer(Int64(round))]))
                }
            } catch let error as SyncClientError where error.code == .refused && error.status == 409 {
                // This client already holds the key: a local constraint, as in any database.
            }
            _ = try? await clients[Int.random(in: 0..<3, using: &random)].sync()
        }
        #expect(faults.counts.faults > 20)

        faultsOn.withLock { $0 = false }
        for _ in 0..<3 { for client in clients { try await client.sync() } }

        let server = try await harness.serverObjects()
        for client in clients {
            #expect(Set(try await client.objects("booking")) == Set(server.values))
        }
        let primaryKeys = server.values.compactMap { $0.fields["pk"] }
        #expect(primaryKeys.count == Set(primaryKeys).count)
        for guid in created {
            #expect(try await clients[0].object("booking", guid: guid) != nil, "\(guid) never reached the others")
        }
    }
}
