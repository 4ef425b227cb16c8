public import Logging
public import PostgresNIO

extension PostgresStore {
    /// The settings each connection of the store's pool starts with: `plan_cache_mode` set to
    /// `force_generic_plan`.
    ///
    /// The store runs a few statements over and over, each prepared once a connection, and their
    /// best plans do not depend on the values bound (keys, positions, arrays of records). By default
    /// PostgreSQL plans a prepared statement again at each of its first five runs, and at every run
    /// after that when a plan for the values looks cheaper, which it often does for statements that
    /// take arrays; a generic plan is made once. With 100 devices syncing, PostgreSQL's share of
    /// the work went down by about a tenth (see `docs/performance.md`).
    /// ``withStore(client:configuration:backgroundLogger:_:)`` adds these settings to the pool it
    /// makes, unless the configuration already sets them; a pool of your own for
    /// ``init(client:configuration:)`` can add them to its `options.additionalStartupParameters`.
    public static let sessionSettings: [(name: String, value: String)] = [("plan_cache_mode", "force_generic_plan")]

    /// `configuration` with ``sessionSettings`` it does not set itself.
    static func withSessionSettings(_ configuration: PostgresClient.Configuration) -> PostgresClient.Configuration {
        var configuration = configuration
        for setting in sessionSettings where !configuration.options.additionalStartupParameters.contains(where: { $0.0 == setting.name }) {
            configuration.options.additionalStartupParameters.append(setting)
        }
        return configuration
    }

    /// Makes a connection pool from `clientConfiguration` (with ``sessionSettings``), runs it, opens a
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
        try await withStore(
            client: clientConfiguration, readReplica: nil, configuration: configuration, backgroundLogger: backgroundLogger, body)
    }
}
