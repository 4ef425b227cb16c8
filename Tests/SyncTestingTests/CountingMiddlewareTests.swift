import SyncCore
import SyncTesting
import Testing

@Suite("CountingMiddleware counts round trips and bytes per path")
struct CountingMiddlewareTests {
    @Test func countsRequestsAnswersAndBytesPerPath() async throws {
        let service = CountingService()
        let counter = CountingMiddleware()
        let transport = loopback(to: service, through: counter)
        _ = try await transport.send(SyncRequest(method: .post, path: "/sync?device=1", body: [1, 2, 3]))
        _ = try await transport.send(SyncRequest(method: .post, path: "/sync?device=2", body: [4]))
        _ = try await transport.send(SyncRequest(method: .get, path: "/status"))

        #expect(counter.total.requests == 3)
        #expect(counter.total.answers == 3)
        #expect(counter.total.failures == 0)
        #expect(counter.counts(for: "/sync") == .init(requests: 2, answers: 2, requestBytes: 4, answerBytes: 2))
        #expect(counter.counts(for: "/status") == .init(requests: 1, answers: 1, answerBytes: 1))
        #expect(counter.counts(for: "/never") == .init())
        #expect(Set(counter.byPath.keys) == ["/sync", "/status"])
    }

    @Test func countsFailuresBelowIt() async throws {
        let service = CountingService()
        let counter = CountingMiddleware()
        let faults = FaultInjectingMiddleware(plan: .scripted([.drop]), sleeper: TestClock())
        let transport = loopback(to: service, through: faults).with(counter)
        await #expect(throws: TransportError.self) {
            _ = try await transport.send(SyncRequest(method: .post, path: "/sync", body: [9, 9]))
        }
        #expect(counter.total == .init(requests: 1, failures: 1, requestBytes: 2))
    }

    @Test func resetStartsOver() async throws {
        let counter = CountingMiddleware()
        let transport = loopback(to: CountingService(), through: counter)
        _ = try await transport.send(SyncRequest(method: .get, path: "/a"))
        counter.reset()
        #expect(counter.total == .init())
        _ = try await transport.send(SyncRequest(method: .get, path: "/a"))
        #expect(counter.total.requests == 1)
    }
}
