import FoundationEssentials
import SyncCore
import Testing

@Suite("Built-in conflict policies")
struct ConflictPolicyTests {
    typealias Support = ConflictTestSupport

    let serverCopy = Support.record(["name": "Ada (server)"], at: 100, by: "server")
    let clientCopy = Support.record(["name": "Ada (client)"], at: 200, by: "phone-1")

    @Test func serverWinsOnBothSides() async {
        let (onServer, onClient) = await Support.resolveOnBothSides(.serverWins, server: serverCopy, client: clientCopy)
        #expect(onServer == .keepLocal)
        #expect(onClient == .takeRemote)
    }

    @Test func clientWinsOnBothSides() async {
        let (onServer, onClient) = await Support.resolveOnBothSides(.clientWins, server: serverCopy, client: clientCopy)
        #expect(onServer == .takeRemote)
        #expect(onClient == .keepLocal)
    }

    @Test func newestWinsPicksTheLaterVersion() async {
        let (onServer, onClient) = await Support.resolveOnBothSides(.newestWins, server: serverCopy, client: clientCopy)
        #expect(onServer == .takeRemote)
        #expect(onClient == .keepLocal)

        let older = Support.record(["name": "old"], at: 50, by: "phone-1")
        let (again, _) = await Support.resolveOnBothSides(.newestWins, server: serverCopy, client: older)
        #expect(again == .keepLocal)
    }

    @Test func newestWinsBreaksAnEqualTimeByNodeOnEveryNode() async {
        let fromA = Support.record(["name": "A"], at: 100, by: "node-a")
        let fromB = Support.record(["name": "B"], at: 100, by: "node-b")
        // Peers of equal standing: both resolve as clients; swapping local and remote must not change the winner.
        let policy = NewestWinsPolicy()
        let onA = await policy.resolve(Conflict(local: fromA, remote: fromB, resolvingSide: .client))
        let onB = await policy.resolve(Conflict(local: fromB, remote: fromA, resolvingSide: .client))
        #expect(onA == .takeRemote)
        #expect(onB == .keepLocal)
        let server = await Support.outcomesOnBothSides(policy, server: fromA, client: fromB)
        #expect(server.server == fromB)
        #expect(server.client == fromB)
    }

    @Test func newestWinsBreaksAnIdenticalVersionByContent() async {
        let first = Support.record(["name": "first"], at: 100, by: "node-a")
        let second = Support.record(["name": "second"], at: 100, by: "node-a")
        let outcomes = await Support.outcomesOnBothSides(NewestWinsPolicy(), server: first, client: second)
        #expect(outcomes.server != nil)
        #expect(outcomes.server == outcomes.client)

        let tombstone = first.tombstone(version: first.version)
        let afterDelete = await Support.outcomesOnBothSides(NewestWinsPolicy(), server: tombstone, client: first)
        #expect(afterDelete.server == afterDelete.client)
    }

    @Test func deferredPolicyAsksTheHandler() async {
        let policy: DeferredPolicy = .deferred { conflict in
            conflict.remote.fields["name"] == "Ada (client)" ? .keepBoth : .deferred
        }
        let onServer = await policy.resolve(Conflict(local: serverCopy, remote: clientCopy, resolvingSide: .server))
        let onClient = await policy.resolve(Conflict(local: clientCopy, remote: serverCopy, resolvingSide: .client))
        #expect(onServer == .keepBoth)
        #expect(onClient == .deferred)
    }

    @Test func policiesWorkBehindAnExistential() async {
        let policies: [any ConflictPolicy] = [.serverWins, .clientWins, .newestWins, .fieldMerge(), .deferred { _ in .keepLocal }]
        var answers: [Resolution] = []
        for policy in policies {
            answers.append(await policy.resolve(Conflict(local: serverCopy, remote: clientCopy, resolvingSide: .server)))
        }
        #expect(answers == [.keepLocal, .takeRemote, .takeRemote, .takeRemote, .keepLocal])
    }
}
