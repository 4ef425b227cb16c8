import Aquasync
import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// A sync with changes to send is one request when nothing waits to be pulled: the first pack goes on the
/// condition that the account has no change after the device's `latestUST`, and a pack the server does not
/// apply on that condition is answered 409 with the pull the device must make first.
@Suite("Aquasync: a push on condition, and a sync of one request when nothing waits to be pulled")
struct AquasyncConditionalPushTests {
    static let token = "0f8fad5b-d9cb-469f-a165-70867728950e"

    static func pack(_ gid: String, name: String, id: String) -> SyncValue {
        [
            "_id": .string(id),
            "Contact": [["gid": .string(gid), "deviceToken": .string(token), "localTimestamp": 7, "name": .string(name)]],
        ]
    }

    static func push(_ pack: SyncValue, query: String) throws -> SyncRequest {
        SyncRequest(method: .post, path: "/deltas" + query, contentType: "application/json", body: try JSONCodec().encode(pack))
    }

    @Test("a pack on condition is applied only when the account has no change after latestUST; otherwise 409 with the pull's answer and nothing applied", arguments: TransportRoute.allCases)
    func conditionOnTheAccount(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let other = harness.client(.json, through: transport)
            let gid = try await other.save("Contact", fields: ["name": "from the other device"])
            try await other.sync()  // position 1

            let mine = Self.pack("6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b", name: "mine", id: "0190c2a4-7b6e-7c1a-9d2f-3e4a5b6c7d8e")
            let refused = try await transport.send(Self.push(mine, query: "?latestUST=0&deviceToken=\(Self.token)"))
            #expect(refused.status == 409)
            let answer = try JSONCodec().decode(refused.body)
            #expect(answer["latestUST"] == 1)
            #expect(answer["Contact"]?.arrayValue?.map { $0["gid"] } == [.string(gid)])
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == ChangePosition(1), "nothing of the pack was applied")

            // Pulled up to 1, the device's pack goes through, and the answer lets it move past its pack.
            let applied = try await transport.send(Self.push(mine, query: "?latestUST=1&deviceToken=\(Self.token)"))
            #expect(applied.status == 200)
            let success = try JSONCodec().decode(applied.body)
            #expect(success["id"] == "success" && success["ustBefore"] == 1 && success["latestUST"] == 2)

            // The same pack sent again (a retry after a lost answer), on the condition it was first sent on:
            // the account changed (by the pack itself), so the answer is the pull, without the device's own delta.
            let again = try await transport.send(Self.push(mine, query: "?latestUST=1&deviceToken=\(Self.token)"))
            #expect(again.status == 409)
            let pull = try JSONCodec().decode(again.body)
            #expect(pull["latestUST"] == 2 && pull["Contact"] == nil)
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == ChangePosition(2))
        }
    }

    @Test("a condition that is not a non-negative integer, or a deviceToken that is not a lowercase UUID, is 400 and nothing is applied", arguments: TransportRoute.allCases)
    func malformedCondition(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let pack = Self.pack("6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b", name: "x", id: "0190c2a4-7b6e-7c1a-9d2f-3e4a5b6c7d8e")
            for query in ["?latestUST=-1", "?latestUST=soon", "?latestUST=", "?latestUST=0&deviceToken=ABC", "?deviceToken=ABC"] {
                let response = try await transport.send(Self.push(pack, query: query))
                #expect(response.status == 400, "\(query)")
            }
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == .start)
        }
    }

    @Test("a device's sync is one request when nothing waits to be pulled, two when another device wrote since: the pull comes first and the device's policy decides", arguments: TransportRoute.allCases)
    func requestsOfASync(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let requests = CountingMiddleware()
            let counted = transport.with(requests)
            let clock = TestClock()
            let first = harness.client(.json, clock: clock, through: counted)
            let second = harness.client(.json, clock: clock, through: counted, conflictPolicy: .serverWins)
            func requestsOf(_ sync: () async throws -> AquasyncClient.Report) async throws -> (AquasyncClient.Report, Int) {
                requests.reset()
                return (try await sync(), requests.total.requests)
            }

            let gid = try await first.save("Contact", fields: ["name": "Ada"])
            var (report, count) = try await requestsOf { try await first.sync() }
            #expect(report.pushed == 1 && report.pulled == 0 && count == 1, "a push with nothing to pull")
            (report, count) = try await requestsOf { try await second.sync() }
            #expect(report.pulled == 1 && count == 1, "nothing to send: a pull")

            // Both edit the record; the first device syncs first. The second's pack is not applied: it pulls
            // first, and its own policy (serverWins) takes the first device's version and sends nothing.
            try await first.save("Contact", gid: gid, fields: ["name": "first's edit"])
            clock.wallTime = clock.wallTime.addingTimeInterval(1)
            try await second.save("Contact", gid: gid, fields: ["name": "second's newer edit"])
            (report, count) = try await requestsOf { try await first.sync() }
            #expect(report.pushed == 1 && count == 1)
            (report, count) = try await requestsOf { try await second.sync() }
            #expect(report.pulled == 1 && report.pushed == 0 && count == 1, "the refused pack's answer was the pull; nothing left to send")
            #expect(try await second.object("Contact", gid: gid)?.fields["name"] == "first's edit")

            // An edit of another record after the first device wrote: the pull, then the push.
            let other = try await second.save("Contact", fields: ["name": "Bob"])
            _ = try await first.save("Contact", fields: ["name": "Cy"])
            _ = try await requestsOf { try await first.sync() }
            (report, count) = try await requestsOf { try await second.sync() }
            #expect(report.pulled == 1 && report.pushed == 1 && count == 2)
            #expect(try await first.sync().pulled == 1)
            #expect(try await first.object("Contact", gid: other)?.fields["name"] == "Bob")
        }
    }

    /// A server from before the condition: it takes a push's query for nothing and applies the pack.
    struct IgnoringTheCondition: SyncServiceMiddleware {
        func intercept(
            _ request: SyncRequest, context: ServiceContext, next: @Sendable (SyncRequest, ServiceContext) async throws -> SyncResponse
        ) async throws -> SyncResponse {
            var request = request
            if request.method == .post { request.path = String(request.pathWithoutQuery) }
            return try await next(request, context)
        }
    }

    @Test("against a server that ignores the condition, a device whose pack went in after another device's change pulls that change after its push, in the same sync")
    func serverWithoutTheCondition() async throws {
        let harness = AquasyncHarness()
        let transport = harness.loopback(front: IgnoringTheCondition())
        let first = harness.client(.json, through: transport)
        let second = harness.client(.json, through: transport)
        let ada = try await first.save("Contact", fields: ["name": "Ada"])
        try await first.sync()
        try await second.save("Contact", fields: ["name": "Bob"])

        let report = try await second.sync()
        #expect(report.pushed == 1 && report.pulled == 1, "the pack's answer did not let it move past: it pulled")
        #expect(try await second.object("Contact", gid: ada)?.fields["name"] == "Ada")
        #expect(try await second.sync().pulled == 0)
    }
}
