import Foundation
import SyncCore
import SyncSQLite
import TestSupport
import Testing

// The browsing checks of `BrowsableStore` (TestSupport's `BrowsingChecks`), on `MemoryStore` and on
// `SQLiteStore` (in memory and on a file); `Tests/SyncPostgresTests/StoreBrowsingTests.swift` runs them on `PostgresStore`.

/// A store the browsing checks run on.
enum BrowsedStore: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqliteInMemory
    case sqliteFile

    var testDescription: String { rawValue }

    /// Whether ``SyncCore/SyncStore/readCommitted(for:_:)`` skips the account's transactions, so a page
    /// can be read while one is open (`MemoryStore` runs it as a transaction).
    var pageReadsSkipTransactions: Bool { self != .memory }
}

/// Runs `body` with a fresh, empty store of `kind`, and removes its files afterwards.
private func withBrowsedStore(_ kind: BrowsedStore, _ body: (any BrowsableStore) async throws -> Void) async throws {
    switch kind {
    case .memory:
        try await body(MemoryStore())
    case .sqliteInMemory:
        try await body(SQLiteStore.inMemory())
    case .sqliteFile:
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.file("browsing.sqlite"))
        defer { try? store.close() }
        try await body(store)
    }
}

@Suite("StoreBrowsing: MemoryStore and SQLiteStore list accounts and collections, and page records")
struct StoreBrowsingTests {
    @Test(arguments: BrowsedStore.allCases)
    func summariesCountAccountsAndCollections(_ kind: BrowsedStore) async throws {
        try await withBrowsedStore(kind) { store in try await BrowsingChecks.summaries(store) }
    }

    @Test(arguments: BrowsedStore.allCases)
    func emptyStoreHasNothingToList(_ kind: BrowsedStore) async throws {
        try await withBrowsedStore(kind) { store in try await BrowsingChecks.emptyStore(store) }
    }

    @Test(arguments: BrowsedStore.allCases)
    func recordPagePagesInIDOrderWithTombstones(_ kind: BrowsedStore) async throws {
        try await withBrowsedStore(kind) { store in try await BrowsingChecks.paging(store) }
    }

    @Test(arguments: BrowsedStore.allCases)
    func storedRecordFindsAndMisses(_ kind: BrowsedStore) async throws {
        try await withBrowsedStore(kind) { store in try await BrowsingChecks.singleRecords(store) }
    }

    @Test(arguments: BrowsedStore.allCases)
    func readsDoNotWaitForAnOpenTransaction(_ kind: BrowsedStore) async throws {
        try await withBrowsedStore(kind) { store in
            try await BrowsingChecks.readsBesideOpenTransaction(store, pageReadsSkipTransactions: kind.pageReadsSkipTransactions)
        }
    }
}
