import SyncCore
import SyncSQLite

/// Where a test's store keeps its database.
enum StoreKind: String, CaseIterable, Sendable {
    case inMemory
    case file

    var testDescription: String { rawValue }
}

/// Runs `body` with a fresh, empty store of `kind`, and removes its files afterwards.
func withStore<T>(
    _ kind: StoreKind, configuration: SQLiteStore.Configuration = SQLiteStore.Configuration(),
    _ body: (SQLiteStore) async throws -> T
) async throws -> T {
    switch kind {
    case .inMemory:
        return try await body(SQLiteStore.inMemory(configuration: configuration))
    case .file:
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.file("store.sqlite"), configuration: configuration)
        defer { try? store.close() }
        return try await body(store)
    }
}
