public import Logging
public import PostgresNIO

extension PostgresStore {
    /// Makes a connection pool from `clientConfiguration`, runs it, opens a
    /// store on it and hands the store to `body`; shuts the pool down when
    /// `body` returns or throws.
    ///
    /// ```swift
    /// let database = PostgresClient.Configuration(
    ///     host: "127.0.0.1", port: 5432, username: "anchorage", password: nil, database: "sync", tls: .disable)
    /// let latest = try await PostgresStore.withStore(client: database) { store in
    ///     try await store.latestPosition(for: "ada")
    /// }
    /// ```
    /// - Parameters:
    ///   - clientConfiguration: how to reach the database.
    ///   - configuration: where the store keeps its tables.
    ///   - backgroundLogger: where postgres-nio logs the pool's background work.
    ///   - body: the work to do with the store; the store must not be used after it returns.
    /// - Returns: what `body` returns.
    /// - Throws: what opening the store (``SyncCore/StoreError``) or `body` throws.
    public static func withStore<Result: Sendable>(
        client clientConfiguration: PostgresClient.Configuration,
        configuration: Configuration = Configuration(),
        backgroundLogger: Logger = Logger(label: "Anchorage.PostgresStore.pool"),
        _ body: (PostgresStore) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: backgroundLogger)
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let store = try await PostgresStore(client: client, configuration: configuration)
            return try await body(store)
        }
    }
}
