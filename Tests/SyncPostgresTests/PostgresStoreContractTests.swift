import SyncCore
import SyncPostgres
import SyncTesting
import Testing

/// Runs one check of the store contract, each store of it in a fresh schema.
private func verify(
    concurrentWriters: Int = 8, incrementsPerWriter: Int = 200,
    _ check: @Sendable (StoreContractSuite) async throws -> Void
) async throws {
    try await withTestDatabase { database in
        let suite = StoreContractSuite(concurrentWriters: concurrentWriters, incrementsPerWriter: incrementsPerWriter) {
            try await database.makeStore()
        }
        try await check(suite)
    }
}

@Suite(
    "PostgresStore keeps the store contract",
    .enabled(if: postgresAvailable, "no PostgreSQL server could be started (reason on standard error)"))
struct PostgresStoreContractTests {
    @Test func roundTrip() async throws { try await verify { try await $0.verifyRoundTrip() } }

    @Test func readYourWrites() async throws { try await verify { try await $0.verifyReadYourWrites() } }

    @Test func rollbackOnThrow() async throws { try await verify { try await $0.verifyRollbackOnThrow() } }

    @Test func changeSequence() async throws { try await verify { try await $0.verifyChangeSequence() } }

    @Test func paging() async throws { try await verify { try await $0.verifyPaging() } }

    @Test func collectionFilter() async throws { try await verify { try await $0.verifyCollectionFilter() } }

    @Test func rewriteAppearsOnce() async throws { try await verify { try await $0.verifyRewriteAppearsOnce() } }

    @Test func accountIsolation() async throws { try await verify { try await $0.verifyAccountIsolation() } }

    @Test func metadata() async throws { try await verify { try await $0.verifyMetadata() } }

    @Test func purge() async throws { try await verify { try await $0.verifyPurge() } }

    @Test func invalidLimitsRejected() async throws { try await verify { try await $0.verifyInvalidLimitsRejected() } }
}

@Suite(
    "PostgresStore soak: 8 writers × 1,000 transactions",
    .enabled(if: postgresAvailable, "no PostgreSQL server could be started (reason on standard error)"))
struct PostgresStoreSoakContractTests {
    @Test func concurrentIncrementsLoseNoUpdate() async throws {
        try await verify(concurrentWriters: 8, incrementsPerWriter: 1_000) {
            try await $0.verifyConcurrentIncrements()
        }
    }

    @Test func concurrentReaderSeesEveryChangeOnce() async throws {
        try await verify(concurrentWriters: 8, incrementsPerWriter: 1_000) {
            try await $0.verifyConcurrentReaderSeesEveryChangeOnce()
        }
    }
}
