import AppSync
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// The seed's nine unit-test scenarios, end to end, in process and over HTTP.
@Suite("appSync: the seed's nine scenarios, in process and over HTTP")
struct AppSyncScenarioTests {
    @Test("1. server to client: new objects and updates; the client's counter does not move", arguments: TransportRoute.allCases)
    func serverToClient(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let client = harness.client(transport, conflictPolicy: ServerWinsPolicy())
            try await harness.serverSave(guid: "S1", fields: ["pk": "2014-05-10", "name": "apples", "value": 9])
            try await harness.serverSave(guid: "S2", fields: ["pk": "2014-06-12", "name": "oranges", "value": 3])
            #expect(try await client.sync().downloaded == 2)
            harness.clock.advance()
            try await harness.serverSave(guid: "S2", fields: ["pk": "2014-06-12", "name": "oranges", "value": 7])
            #expect(try await client.sync().downloaded == 1)
            #expect(try await client.object("booking", guid: "S2")?.fields["value"] == 7)
            let counters = try await client.counters("booking")
            #expect(counters.counter == 0)
            #expect(counters.serverCounterLastSync == Int64(try await harness.serverStore.latestPosition(for: harness.account).rawValue))
        }
    }

    @Test("2. client to server: new objects and updates; the server's counter moves for each", arguments: TransportRoute.allCases)
    func clientToServer(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let client = harness.client(transport, conflictPolicy: ServerWinsPolicy())
            let first = try await client.save("booking", fields: ["pk": "2014-05-10", "name": "apples", "value": 9])
            try await client.save("booking", fields: ["pk": "2014-07-18", "name": "cherries", "value": 6])
            #expect(try await client.sync().uploaded == 2)
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == ChangePosition(2))
            harness.clock.advance()
            try await client.save("booking", guid: first, fields: ["pk": "2014-05-10", "name": "apples", "value": 10])
            #expect(try await client.sync().uploaded == 1)
            #expect(try await harness.serverObjects()[first]?.fields["value"] == 10)
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == ChangePosition(3))
            let counters = try await client.counters("booking")
            #expect(counters.counter == 3)
            #expect(counters.counterLastSync == 3)
        }
    }

    @Test("3. client A to the server to client B", arguments: TransportRoute.allCases)
    func clientToClient(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let a = harness.client(transport, conflictPolicy: ServerWinsPolicy())
            let b = harness.client(transport, conflictPolicy: ServerWinsPolicy())
            let guid = try await a.save("booking", fields: ["pk": "2014-05-10", "name": "apples", "value": 9])
            try await a.sync()
            #expect(try await b.sync().downloaded == 1)
            #expect(try await b.object("booking", guid: guid)?.fields["name"] == "apples")
            #expect(try await b.counters("booking").counter == 0)
        }
    }

    @Test("4. no unneeded syncing: a client never downloads its own upload, and a second sync moves nothing", arguments: TransportRoute.allCases)
    func noUnneededSyncing(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let log = RequestLog()
            let client = harness.client(transport.with(log), conflictPolicy: ServerWinsPolicy())
            try await client.save("booking", fields: ["pk": "2014-05-10", "name": "apples", "value": 9])
            try await client.sync()
            let latest = try await harness.serverStore.latestPosition(for: harness.account)
            #expect(try await client.counters("booking").serverCounterLastSync == Int64(latest.rawValue))
            log.clear()
            let second = try await client.sync()
            #expect(second == AppSyncClient.Report())
            #expect(log.requests == ["GET /rest/booking/list/\(latest.rawValue)"])
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == latest)
        }
    }

    @Test("5. soft deletes travel as isdeleted = 1", arguments: TransportRoute.allCases)
    func softDelete(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let a = harness.client(transport, conflictPolicy: ServerWinsPolicy())
            let b = harness.client(transport, conflictPolicy: ServerWinsPolicy())
            let guid = try await a.save("booking", fields: ["pk": "2014-05-10", "name": "apples"])
            try await a.sync()
            try await b.sync()
            harness.clock.advance()
            try await a.delete("booking", guid: guid)
            try await a.sync()
            try await b.sync()
            #expect(try await b.object("booking", guid: guid)?.isDeleted == true)
            #expect(try await b.objects("booking").isEmpty)
            #expect(try await harness.serverObjects().isEmpty)
        }
    }

    enum Priority: String, CaseIterable, CustomStringConvertible {
        case server, client, timestamp
        var description: String { rawValue }
        var policy: any ConflictPolicy {
            switch self {
            case .server: ServerWinsPolicy()
            case .client: ClientWinsPolicy()
            case .timestamp: NewestWinsPolicy()
            }
        }
    }

    @Test("6. an object changed on the server and on a client is settled by the conflict policy", arguments: Priority.allCases, TransportRoute.allCases)
    func conflict(priority: Priority, route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let client = harness.client(transport, conflictPolicy: priority.policy)
            let guid = try await client.save("booking", fields: ["pk": "2014-05-10", "name": "apples", "value": 1])
            try await client.sync()
            harness.clock.advance()
            try await client.save("booking", guid: guid, fields: ["pk": "2014-05-10", "name": "apples", "value": 2])
            harness.clock.advance()
            try await harness.serverSave(guid: guid, fields: ["pk": "2014-05-10", "name": "apples", "value": 3])
            let report = try await client.sync()
            #expect(report.conflicts == 1)
            let expected: SyncValue = priority == .client ? 2 : 3
            #expect(try await client.object("booking", guid: guid)?.fields["value"] == expected)
            #expect(try await harness.serverObjects()[guid]?.fields["value"] == expected)
        }
    }

    @Test("7. the same primary key made on the server and on a client ends as one object", arguments: Priority.allCases, TransportRoute.allCases)
    func primaryKeyConflictWithServer(priority: Priority, route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let client = harness.client(transport, conflictPolicy: priority.policy)
            try await harness.serverSave(guid: "SERVER", fields: ["pk": "2014-05-10", "name": "server booking"])
            harness.clock.advance()
            let local = try await client.save("booking", fields: ["pk": "2014-05-10", "name": "client booking"])
            let report = try await client.sync()
            #expect(report.conflicts == 1)
            let expectedName: SyncValue = priority == .server ? "server booking" : "client booking"
            let clientObjects = try await client.objects("booking")
            #expect(clientObjects.map(\.guid) == ["SERVER"])
            #expect(clientObjects.first?.fields["name"] == expectedName)
            #expect(try await client.object("booking", guid: local)?.isDeleted == true)
            let serverObjects = try await harness.serverObjects()
            #expect(Array(serverObjects.keys) == ["SERVER"])
            #expect(serverObjects["SERVER"]?.fields["name"] == expectedName)
        }
    }

    @Test("8. the same primary key made on two clients is identical everywhere after two full cycles", arguments: Priority.allCases, TransportRoute.allCases)
    func primaryKeyConflictBetweenClients(priority: Priority, route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let a = harness.client(transport, conflictPolicy: priority.policy)
            let b = harness.client(transport, conflictPolicy: priority.policy)
            try await a.save("booking", fields: ["pk": "2014-05-10", "name": "from A"])
            harness.clock.advance()
            try await b.save("booking", fields: ["pk": "2014-05-10", "name": "from B"])
            for _ in 0..<2 {
                try await a.sync()
                try await b.sync()
            }
            let server = try await harness.serverObjects()
            let onA = try await a.objects("booking")
            let onB = try await b.objects("booking")
            #expect(server.count == 1)
            #expect(onA == onB)
            #expect(onA == Array(server.values))
        }
    }

    @Test("9. a full sync with local objects not yet synced sends and receives everything", arguments: TransportRoute.allCases)
    func fullSync(route: TransportRoute) async throws {
        let harness = AppSyncHarness()
        try await harness.withTransport(route) { transport in
            let client = harness.client(transport, conflictPolicy: ServerWinsPolicy())
            try await harness.serverSave(guid: "S1", fields: ["pk": "2014-05-10", "name": "server"])
            try await client.save("booking", fields: ["pk": "2014-05-11", "name": "synced"])
            try await client.sync()
            try await client.save("booking", fields: ["pk": "2014-05-12", "name": "not yet synced"])
            try await harness.serverSave(guid: "S2", fields: ["pk": "2014-05-13", "name": "server, later"])
            let report = try await client.fullSync()
            #expect(report.conflicts == 0)
            let server = try await harness.serverObjects()
            let local = try await client.objects("booking")
            #expect(server.count == 4)
            #expect(Set(local) == Set(server.values))
        }
    }
}
