import SyncCore
import SyncTesting
import Testing

@Suite("MemoryStore keeps the store contract")
struct MemoryStoreContractTests {
    let suite = StoreContractSuite { MemoryStore() }

    @Test func roundTrip() async throws { try await suite.verifyRoundTrip() }

    @Test func readYourWrites() async throws { try await suite.verifyReadYourWrites() }

    @Test func rollbackOnThrow() async throws { try await suite.verifyRollbackOnThrow() }

    @Test func changeSequence() async throws { try await suite.verifyChangeSequence() }

    @Test func paging() async throws { try await suite.verifyPaging() }

    @Test func collectionFilter() async throws { try await suite.verifyCollectionFilter() }

    @Test func rewriteAppearsOnce() async throws { try await suite.verifyRewriteAppearsOnce() }

    @Test func accountIsolation() async throws { try await suite.verifyAccountIsolation() }

    @Test func metadata() async throws { try await suite.verifyMetadata() }

    @Test func purge() async throws { try await suite.verifyPurge() }

    @Test func invalidLimitsRejected() async throws { try await suite.verifyInvalidLimitsRejected() }

    @Test func concurrentIncrements() async throws { try await suite.verifyConcurrentIncrements() }

    @Test func concurrentReaderSeesEveryChangeOnce() async throws {
        try await suite.verifyConcurrentReaderSeesEveryChangeOnce()
    }

    @Test func runAllPasses() async throws { try await suite.runAll() }
}

@Suite("MemoryStore soak: 8 writers × 1,000 transactions")
struct MemoryStoreSoakTests {
    let soak = StoreContractSuite(concurrentWriters: 8, incrementsPerWriter: 1_000) { MemoryStore() }

    @Test func concurrentIncrementsLoseNoUpdate() async throws { try await soak.verifyConcurrentIncrements() }

    @Test func concurrentReaderSeesEveryChangeOnce() async throws {
        try await soak.verifyConcurrentReaderSeesEveryChangeOnce()
    }
}
