import Foundation
import SyncCore
import SyncPostgres
import TestSupport
import Testing

// The browsing checks of `BrowsableStore` (TestSupport's `BrowsingChecks`), on `PostgresStore`;
// `Tests/SyncSQLiteTests/StoreBrowsingTests.swift` runs them on `MemoryStore` and `SQLiteStore`.

/// Each check's store lives in a fresh schema of the test server (see `withTestDatabase`).
@Suite(
    "StoreBrowsing: PostgresStore lists accounts and collections, and pages records",
    .enabled("no PostgreSQL server could be started (reason on standard error)") { await TestPostgresServer.isAvailable })
struct PostgresStoreBrowsingTests {
    @Test func summariesCountAccountsAndCollections() async throws {
        try await withTestDatabase { database in try await BrowsingChecks.summaries(try await database.makeStore()) }
    }

    @Test func emptyStoreHasNothingToList() async throws {
        try await withTestDatabase { database in try await BrowsingChecks.emptyStore(try await database.makeStore()) }
    }

    @Test func recordPagePagesInIDOrderWithTombstones() async throws {
        try await withTestDatabase { database in try await BrowsingChecks.paging(try await database.makeStore()) }
    }

    @Test func storedRecordFindsAndMisses() async throws {
        try await withTestDatabase { database in try await BrowsingChecks.singleRecords(try await database.makeStore()) }
    }

    @Test func readsDoNotWaitForAnOpenTransaction() async throws {
        try await withTestDatabase { database in
            try await BrowsingChecks.readsBesideOpenTransaction(try await database.makeStore(), pageReadsSkipTransactions: true)
        }
    }

    @Test func accountNameWithNULHoldsNothing() async throws {
        try await withTestDatabase { database in
            let store = try await database.makeStore()
            try await BrowsingChecks.commit([BrowsingChecks.record("notes", "n1", second: 1)], to: store, for: "ada")
            #expect(try await store.collectionSummaries(of: "ada\u{0}") == [])
            #expect(try await store.collectionSummaries(of: "ada").map(\.liveRecords) == [1])
        }
    }
}
