import SyncCore
import SyncTesting
import Testing

@Suite("The store contract suite catches a store that breaks a rule")
struct StoreContractSuiteCatchesFlawsTests {
    /// Each flaw, the check that must catch it, and the rule it names.
    static let cases: [(FlawedStore.Flaw, String)] = [
        (.dropsNullFields, "round trip"),
        (.hidesOwnWrites, "read your writes"),
        (.commitsOnThrow, "rollback on throw"),
        (.reversesChanges, "change sequence"),
        (.neverHasMore, "paging"),
        (.ignoresCollectionFilter, "collection filter"),
        (.repeatsRewrites, "rewrite appears once"),
        (.sharesAccounts, "account isolation"),
        (.sharesPeers, "metadata"),
        (.purgeLeavesTombstone, "purge"),
        (.clampsLimits, "invalid limits rejected"),
        (.autocommitsEachCall, "concurrent increments"),
    ]

    @Test(arguments: cases)
    func flawIsCaught(flaw: FlawedStore.Flaw, rule: String) async throws {
        let suite = StoreContractSuite(concurrentWriters: 8, incrementsPerWriter: 50) { FlawedStore(flaw) }
        let error = await #expect(throws: VerificationError.self) {
            try await Self.check(rule, of: suite)
        }
        #expect(error?.message.hasPrefix("store contract, \(rule):") == true, "\(String(describing: error))")
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

    static func check(_ rule: String, of suite: StoreContractSuite) async throws {
        switch rule {
        case "round trip": try await suite.verifyRoundTrip()
        case "read your writes": try await suite.verifyReadYourWrites()
        case "rollback on throw": try await suite.verifyRollbackOnThrow()
        case "change sequence": try await suite.verifyChangeSequence()
        case "paging": try await suite.verifyPaging()
        case "collection filter": try await suite.verifyCollectionFilter()
        case "rewrite appears once": try await suite.verifyRewriteAppearsOnce()
        case "account isolation": try await suite.verifyAccountIsolation()
        case "metadata": try await suite.verifyMetadata()
        case "purge": try await suite.verifyPurge()
        case "invalid limits rejected": try await suite.verifyInvalidLimitsRejected()
        case "concurrent increments": try await suite.verifyConcurrentIncrements()
        default: Issue.record("no check named \(rule)")
        }
    }
}
