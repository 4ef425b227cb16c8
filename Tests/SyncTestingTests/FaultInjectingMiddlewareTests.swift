import SyncCore
import SyncTesting
import Testing

@Suite("FaultInjectingMiddleware: each fault, seen from the client and the server")
struct FaultInjectingMiddlewareTests {
    let service = CountingService()

    func middleware(_ faults: [TransportFault?], clock: TestClock = TestClock()) -> FaultInjectingMiddleware<TestClock>
    {
        FaultInjectingMiddleware(plan: .scripted(faults), sleeper: clock)
    }

    @Test func noFaultPassesThrough() async throws {
        let faults = middleware([nil])
        let response = try await loopback(to: service, through: faults).send(SyncRequest(method: .get, path: "/a"))
        #expect(response.status == 200)
        #expect(response.text == "1")
        #expect(service.processed == 1)
        #expect(faults.counts == FaultCounts(requests: 1, passedThrough: 1))
    }

    @Test func dropNeverReachesTheServer() async throws {
        let faults = middleware([.drop])
        await #expect(throws: TransportError.self) {
            _ = try await loopback(to: service, through: faults).send(SyncRequest(method: .post, path: "/a"))
        }
        #expect(service.processed == 0)
        #expect(faults.counts == FaultCounts(requests: 1, dropped: 1))
    }

    @Test func duplicateReachesTheServerTwiceAndAnswersOnce() async throws {
        let faults = middleware([.duplicate])
        let response = try await loopback(to: service, through: faults).send(SyncRequest(method: .post, path: "/a"))
        #expect(service.processed == 2)
        #expect(response.text == "1")
        #expect(faults.counts.duplicated == 1)
    }

    @Test func delayWaitsForTheClock() async throws {
        let clock = TestClock()
        let faults = middleware([.delay(.seconds(30))], clock: clock)
        let transport = loopback(to: service, through: faults)
        let sending = Task { try await transport.send(SyncRequest(method: .get, path: "/slow")) }
        await clock.waitForSleepers(1)
        #expect(service.processed == 0)
        clock.advance(by: .seconds(29))
        #expect(service.processed == 0)
        clock.advance(by: .seconds(1))
        let response = try await sending.value
        #expect(response.text == "1")
        #expect(service.processed == 1)
        #expect(faults.counts.delayed == 1)
    }

    @Test func reorderSendsTheRequestAfterTheNextOne() async throws {
        let faults = middleware([.reorder, nil])
        let transport = loopback(to: service, through: faults)
        let first = Task { try await transport.send(SyncRequest(method: .post, path: "/first")) }
        await faults.waitForHeldRequests(1)
        #expect(service.processed == 0)
        let second = try await transport.send(SyncRequest(method: .post, path: "/second"))
        let firstResponse = try await first.value
        #expect(service.paths == ["/second", "/first"])
        #expect(second.text == "1")
        #expect(firstResponse.text == "2")
        #expect(faults.counts.reordered == 1)
        #expect(faults.heldRequestCount == 0)
    }

    @Test func heldRequestIsSentWhenReleased() async throws {
        let faults = middleware([.reorder])
        let transport = loopback(to: service, through: faults)
        let held = Task { try await transport.send(SyncRequest(method: .post, path: "/alone")) }
        await faults.waitForHeldRequests(1)
        faults.releaseHeldRequests()
        #expect(try await held.value.text == "1")
        #expect(service.processed == 1)
    }

    @Test func heldRequestIsCancellable() async throws {
        let faults = middleware([.reorder])
        let transport = loopback(to: service, through: faults)
        let held = Task { try await transport.send(SyncRequest(method: .post, path: "/alone")) }
        await faults.waitForHeldRequests(1)
        held.cancel()
        await #expect(throws: CancellationError.self) { _ = try await held.value }
        #expect(service.processed == 0)
        #expect(faults.heldRequestCount == 0)
    }

    @Test func cutAfterProcessingLosesTheAnswer() async throws {
        let faults = middleware([.cutAfterProcessing])
        await #expect(throws: TransportError.self) {
            _ = try await loopback(to: service, through: faults).send(SyncRequest(method: .post, path: "/a"))
        }
        #expect(service.processed == 1)
        #expect(faults.counts.cutAfterProcessing == 1)
    }

    @Test func serverErrorAnswersWithoutReachingTheServer() async throws {
        let faults = middleware([.serverError(status: 503)])
        let response = try await loopback(to: service, through: faults).send(SyncRequest(method: .post, path: "/a"))
        #expect(response.status == 503)
        #expect(service.processed == 0)
        #expect(faults.counts.serverErrors == 1)
    }

    @Test func scriptRunsInOrderThenPassesEverythingThrough() async throws {
        let faults = middleware([nil, .drop, .serverError(status: 500)])
        let transport = loopback(to: service, through: faults)
        var statuses: [String] = []
        for index in 0..<5 {
            do {
                let response = try await transport.send(SyncRequest(method: .get, path: "/r\(index)"))
                statuses.append(String(response.status))
            } catch is TransportError {
                statuses.append("error")
            }
        }
        #expect(statuses == ["200", "error", "500", "200", "200"])
        #expect(faults.events.map(\.fault) == [nil, .drop, .serverError(status: 500), nil, nil])
        #expect(faults.events.map(\.path) == ["/r0", "/r1", "/r2", "/r3", "/r4"])
        #expect(service.paths == ["/r0", "/r3", "/r4"])
    }

    @Test func requestsOutsideTheFilterPassUncounted() async throws {
        let faults = FaultInjectingMiddleware(
            plan: .scripted([.drop]), sleeper: TestClock(), appliesTo: { $0.path.hasPrefix("/push") })
        let transport = loopback(to: service, through: faults)
        let response = try await transport.send(SyncRequest(method: .get, path: "/sync"))
        #expect(response.status == 200)
        await #expect(throws: TransportError.self) {
            _ = try await transport.send(SyncRequest(method: .get, path: "/push/register"))
        }
        #expect(faults.counts == FaultCounts(requests: 1, dropped: 1))
    }

    @Test func seededPlanIsDeterministic() async throws {
        let kinds: [TransportFault] = [.drop, .duplicate, .cutAfterProcessing, .serverError(status: 502)]
        func run(seed: UInt64) async -> (events: [FaultEvent], counts: FaultCounts, processed: Int) {
            let service = CountingService()
            let faults = FaultInjectingMiddleware(
                plan: .random(seed: seed, probability: 0.5, faults: kinds), sleeper: TestClock())
            let transport = loopback(to: service, through: faults)
            for index in 0..<200 {
                _ = try? await transport.send(SyncRequest(method: .get, path: "/r\(index)"))
            }
            return (faults.events, faults.counts, service.processed)
        }
        let first = await run(seed: 42)
        let again = await run(seed: 42)
        let other = await run(seed: 43)
        #expect(first.events == again.events)
        #expect(first.processed == again.processed)
        #expect(first.events.map(\.fault) != other.events.map(\.fault))
        let counts = first.counts
        #expect(counts.requests == 200)
        #expect(
            counts.passedThrough + counts.dropped + counts.duplicated + counts.cutAfterProcessing + counts.serverErrors
                == 200)
        #expect(counts.faults > 50 && counts.faults < 150)
        #expect(counts.dropped > 0 && counts.duplicated > 0 && counts.cutAfterProcessing > 0 && counts.serverErrors > 0)
        #expect(first.processed == counts.passedThrough + 2 * counts.duplicated + counts.cutAfterProcessing)
    }

    @Test func noFaultsPlanNeverInjects() async throws {
        let faults = FaultInjectingMiddleware(plan: .noFaults)
        let transport = loopback(to: service, through: faults)
        for _ in 0..<10 { _ = try await transport.send(SyncRequest(method: .get, path: "/a")) }
        #expect(faults.counts == FaultCounts(requests: 10, passedThrough: 10))
        #expect(service.processed == 10)
    }
}
