import SyncCore
import SyncTesting
import Testing

@Suite("The store contract suite catches a store that breaks a rule")
struct StoreContractSuiteCatchesFlawsTests {
    /// Each flaw and the check that must catch it.
    static let cases: [(FlawedStore.Flaw, StoreContractSuite.Check)] = [
        (.dropsNullFields, .roundTrip),
        (.hidesOwnWrites, .readYourWrites),
        (.commitsOnThrow, .rollbackOnThrow),
        (.reversesChanges, .changeSequence),
        (.neverHasMore, .paging),
        (.ignoresCollectionFilter, .collectionFilter),
        (.repeatsRewrites, .rewriteAppearsOnce),
        (.sharesAccounts, .accountIsolation),
        (.sharesPeers, .metadata),
        (.purgeLeavesTombstone, .purge),
        (.clampsLimits, .invalidLimitsRejected),
        (.autocommitsEachCall, .concurrentIncrements),
    ]

    @Test(arguments: cases)
    func flawIsCaught(flaw: FlawedStore.Flaw, check: StoreContractSuite.Check) async throws {
        let suite = StoreContractSuite(concurrentWriters: 8, incrementsPerWriter: 50) { FlawedStore(flaw) }
        let error = await #expect(throws: VerificationError.self) { try await check.run(on: suite) }
        #expect(error?.message.hasPrefix("store contract, \(check.rule):") == true, "\(String(describing: error))")
    }

    @Test func everyFlawHasACase() {
        #expect(Set(Self.cases.map(\.0)) == Set(FlawedStore.Flaw.allCases))
    }

    @Test func runAllStopsAtTheFirstBrokenRule() async throws {
        let suite = StoreContractSuite { FlawedStore(.sharesPeers) }
        let error = await #expect(throws: VerificationError.self) { try await suite.runAll() }
        #expect(error?.message.hasPrefix("store contract, metadata:") == true, "\(String(describing: error))")
    }

    @Test func factoryFailureNamesTheRule() async throws {
        struct NoDatabase: Error {}
        let suite = StoreContractSuite { throw NoDatabase() }
        let error = await #expect(throws: VerificationError.self) { try await suite.verifyPurge() }
        #expect(error?.message.hasPrefix("store contract, purge: the store factory failed") == true)
    }

    @Test("each check names its own rule when it fails", arguments: StoreContractSuite.Check.allCases)
    func checkNamesItsRule(_ check: StoreContractSuite.Check) async throws {
        struct NoDatabase: Error {}
        let suite = StoreContractSuite { throw NoDatabase() }
        let error = await #expect(throws: VerificationError.self) { try await check.run(on: suite) }
        #expect(error?.message.hasPrefix("store contract, \(check.rule): the store factory failed") == true)
    }

    @Test func rulesAreDistinctAndTheConcurrentChecksAreTheSlowOnes() {
        let checks = StoreContractSuite.Check.allCases
        #expect(Set(checks.map(\.rule)).count == checks.count)
        #expect(StoreContractSuite.Check.concurrent == [.concurrentIncrements, .concurrentReaderSeesEveryChangeOnce])
    }

    @Test func countsBelowOneAreRaisedToOne() {
        let suite = StoreContractSuite(concurrentWriters: 0, incrementsPerWriter: -5) { MemoryStore() }
        #expect(suite.concurrentWriters == 1)
        #expect(suite.incrementsPerWriter == 1)
    }
}
