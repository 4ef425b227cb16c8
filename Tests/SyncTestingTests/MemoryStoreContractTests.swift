import SyncCore
import SyncTesting
import Testing

@Suite("MemoryStore keeps the store contract")
struct MemoryStoreContractTests {
    let suite = StoreContractSuite { MemoryStore() }

    @Test(arguments: StoreContractSuite.Check.allCases)
    func keepsTheContract(_ check: StoreContractSuite.Check) async throws { try await check.run(on: suite) }

    @Test func runAllPasses() async throws { try await suite.runAll() }
}

@Suite("MemoryStore soak: 8 writers × 1,000 transactions")
struct MemoryStoreSoakTests {
    let soak = StoreContractSuite(concurrentWriters: 8, incrementsPerWriter: 1_000) { MemoryStore() }

    @Test(arguments: StoreContractSuite.Check.concurrent)
    func losesNothingUnderConcurrentWriters(_ check: StoreContractSuite.Check) async throws {
        try await check.run(on: soak)
    }
}
