import SyncCore
import SyncTesting
import Synchronization
import Testing

@Suite("One sync at a time")
struct SyncGateTests {
    @Test("two syncs started together run one after the other, in the order they came, and never overlap")
    func concurrentSyncsDoNotOverlap() async throws {
        let gate = SyncGate()
        let clock = TestClock()
        let log = Mutex<[String]>([])
        let sync: @Sendable (String) async throws -> Void = { name in
            try await gate.run {
                log.withLock { $0.append("\(name) starts") }
                try await clock.sleep(for: .seconds(1))    // a sync suspends while it talks to the server
                log.withLock { $0.append("\(name) ends") }
            }
        }

        let first = Task { try await sync("A") }
        await clock.waitForSleepers(1)                     // A is inside, suspended
        let second = Task { try await sync("B") }
        #expect(await yieldUntil { gate.waitingCount == 1 }, "B never reached the gate")
        #expect(clock.sleeperCount == 1)                   // B waits at the gate, not inside
        #expect(log.withLock { $0 } == ["A starts"])

        clock.advance(by: .seconds(1))
        try await first.value
        await clock.waitForSleepers(1)                     // now B is inside
        #expect(log.withLock { $0 } == ["A starts", "A ends", "B starts"])
        clock.advance(by: .seconds(1))
        try await second.value
        #expect(log.withLock { $0 } == ["A starts", "A ends", "B starts", "B ends"])
        #expect(gate.waitingCount == 0)
    }

    @Test("a sync that throws opens the gate for the next")
    func throwingSyncOpensTheGate() async throws {
        struct Failed: Error {}
        let gate = SyncGate()
        await #expect(throws: Failed.self) { try await gate.run { throw Failed() } }
        #expect(await gate.run { 42 } == 42)
    }
}
