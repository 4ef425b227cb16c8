import SyncCore
import SyncTesting
import Testing

@Suite("ScriptedFront answers from its script, then lets requests through")
struct ScriptedFrontTests {
    let clock = TestClock()

    func transport(to service: CountingService, through front: ScriptedFront) -> LoopbackTransport {
        LoopbackTransport(service: service.with(front), authenticator: SingleAccountAuthenticator(account: "ada"))
    }

    @Test func scriptFirstThenTheServer() async throws {
        let service = CountingService()
        let front = ScriptedFront(answering: [.text("busy", status: 503), .text("slow", status: 429)], sleeper: clock)
        let transport = transport(to: service, through: front)

        let statuses = [
            try await transport.send(SyncRequest(method: .post, path: "/a?x=1", body: [1])).status,
            try await transport.send(SyncRequest(method: .post, path: "/b", body: [2])).status,
        ]
        clock.advance(by: .seconds(5))
        let through = try await transport.send(SyncRequest(method: .get, path: "/c"))

        #expect(statuses == [503, 429])
        #expect(through.status == 200 && through.text == "1")
        #expect(service.paths == ["/c"], "the scripted requests never reached the service")
        #expect(front.requests.map(\.path) == ["/a", "/b", "/c"])
        #expect(front.requests.map(\.body) == [[1], [2], []])
        #expect(front.requests.map(\.method) == [.post, .post, .get])
        #expect(front.requests.map(\.arrival) == [.zero, .zero, .seconds(5)])
    }

    @Test func holdingCountsRequestsInsideAtOnce() async throws {
        let service = CountingService()
        let front = ScriptedFront(sleeper: clock, holdFor: .seconds(1))
        let transport = transport(to: service, through: front)

        async let first = transport.send(SyncRequest(method: .get, path: "/one"))
        async let second = transport.send(SyncRequest(method: .get, path: "/two"))
        await clock.waitForSleepers(2)
        #expect(service.processed == 0, "held requests have not reached the service yet")
        clock.advance(by: .seconds(1))
        let answers = try await [first, second]

        #expect(answers.map(\.status) == [200, 200])
        #expect(front.mostInFlight == 2)
        #expect(service.processed == 2)
    }
}
