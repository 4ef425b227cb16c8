import Aquasync
import SyncCore
import SyncTesting
import Synchronization
import TestSupport
import Testing

@Suite("Aquasync under a faulty network")
struct AquasyncFaultTests {
    @Test("3 devices making random edits over 200 rounds through dropped, duplicated, cut and failed requests converge with nothing lost")
    func devicesConvergeUnderFaults() async throws {
        let harness = AquasyncHarness()
        let faultsOn = Mutex(true)
        let faults = FaultInjectingMiddleware(
            plan: .random(
                seed: 42, probability: 0.25,
                faults: [.drop, .duplicate, .cutAfterProcessing, .serverError(status: 503), .delay(.milliseconds(1))]),
            appliesTo: { _ in faultsOn.withLock { $0 } })
        let transport = harness.loopback().with(faults)
        let clock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
        let devices = (0..<3).map { _ in
            harness.client(.json, clock: clock, through: transport, retry: RetryPolicy(maxAttempts: 3, initialDelay: .zero))
        }
        var random = SeededGenerator(seed: 7)
        var ledger: [String: Delta] = [:]  // the winning version of every gid written, by the protocol's rule
        var gids: [String] = []
        var failedSyncs = 0

        for round in 0..<200 {
            clock.wallTime = .milliseconds(1_700_000_000_000 + Int64(round) * 1_000 + Int64.random(in: 0..<3, using: &random))
            let device = devices[Int.random(in: 0..<3, using: &random)]
            let gid: String
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4 where !gids.isEmpty:
                gid = gids.randomElement(using: &random)!
                try await device.save("Note", gid: gid, fields: ["text": .string("round \(round)")])
            case 4 where !gids.isEmpty:
                gid = gids.randomElement(using: &random)!
                try await device.delete("Note", gid: gid)
            default:
                gid = try await device.save("Note", fields: ["text": .string("new in round \(round)")])
                gids.append(gid)
            }
            let written = try #require(try await device.object("Note", gid: gid))
            let delta = Delta(
                gid: gid, deviceToken: written.deviceToken, localTimestamp: written.localTimestamp,
                isDeleted: written.isDeleted, fields: written.fields)
            if let known = ledger[gid], !AquasyncNewestWins.isNewer(delta, than: known) {} else { ledger[gid] = delta }
            do {
                try await devices[Int.random(in: 0..<3, using: &random)].sync()
            } catch {
                failedSyncs += 1
            }
        }
        #expect(faults.counts.faults > 20)

        faultsOn.withLock { $0 = false }
        for _ in 0..<2 { for device in devices { try await device.sync() } }

        for device in devices {
            for (gid, winner) in ledger {
                let object = try #require(try await device.object("Note", gid: gid), "\(gid) missing")
                #expect(object.isDeleted == winner.isDeleted)
                // Two deletions hold the same, so a device keeps the one the server had first.
                if !winner.isDeleted {
                    #expect(object.localTimestamp == winner.localTimestamp)
                    #expect(object.fields == winner.fields)
                }
                #expect(!object.isDirty)
            }
            #expect(try await device.objects("Note").count == ledger.values.filter { !$0.isDeleted }.count)
        }
        _ = failedSyncs
    }
}
