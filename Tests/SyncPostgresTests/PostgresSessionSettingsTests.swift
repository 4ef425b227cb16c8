import PostgresNIO
import SyncCore
import SyncPostgres
import TestSupport
import Testing

@Suite(
    "PostgresStore's own pool starts its connections with the store's session settings",
    .enabled("no PostgreSQL server could be started (reason on standard error)") { await TestPostgresServer.isAvailable })
struct PostgresSessionSettingsTests {
    /// `plan_cache_mode` as a connection of `store`'s pool reports it.
    static func planCacheMode(of store: PostgresStore) async throws -> String? {
        for try await mode in try await store.client.query("SHOW plan_cache_mode").decode(String.self) { return mode }
        return nil
    }

    @Test("a pool withStore makes plans each statement once (force_generic_plan); a setting the configuration names is kept")
    func sessionSettings() async throws {
        var configuration = try await testClientConfiguration(maximumConnections: 2)
        configuration.options.additionalStartupParameters = []
        let schema = "session_settings_\(UInt32.random(in: 0...UInt32.max))"
        let made = try await PostgresStore.withStore(client: configuration, configuration: .init(schema: schema)) { store in
            try await Self.planCacheMode(of: store)
        }
        #expect(made == "force_generic_plan")
        configuration.options.additionalStartupParameters = [("plan_cache_mode", "auto")]
        let kept = try await PostgresStore.withStore(client: configuration, configuration: .init(schema: schema)) { store in
            let mode = try await Self.planCacheMode(of: store)
            _ = try await store.client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \"\(schema)\" CASCADE"))
            return mode
        }
        #expect(kept == "auto")
    }
}
