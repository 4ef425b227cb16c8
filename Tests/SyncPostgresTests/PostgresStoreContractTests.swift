import SyncCore
import SyncPostgres
import SyncTesting
import TestSupport
import Testing

/// Each check's stores live in a fresh schema. The concurrency checks run 8
/// writers of 40 transactions each: 320 transactions on one record contend
/// enough to show a lost update or a skipped change, in seconds (8 × 1,000
/// took minutes and proved no more).
@Suite(
    "PostgresStore keeps the store contract; 8 concurrent writers × 40 transactions lose no update",
    .enabled("no PostgreSQL server could be started (reason on standard error)") { await TestPostgresServer.isAvailable })
struct PostgresStoreContractTests {
    @Test(arguments: StoreContractSuite.Check.allCases)
    func keepsTheContract(_ check: StoreContractSuite.Check) async throws {
        try await withTestDatabase { database in
            let suite = StoreContractSuite(concurrentWriters: 8, incrementsPerWriter: 40) {
                try await database.makeStore()
            }
            try await check.run(on: suite)
        }
    }
}
