import Foundation
import Logging
import PostgresNIO
import SyncCore
import SyncPostgres
import Synchronization
import Testing
import TestSupport

/// A running connection pool on the test server, from which each test makes
/// stores in schemas of their own, so tests running side by side never see
/// each other's data.
final class TestDatabase: Sendable {
    /// The pool; it runs while the `withTestDatabase` body runs.
    let client: PostgresClient
    private let schemas: Mutex<[String]>

    fileprivate init(client: PostgresClient) {
        self.client = client
        schemas = Mutex([])
    }

    /// A name for a schema no other test uses.
    static func freshSchemaName() -> String {
        "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// A store in a fresh, empty schema (or in `schema`, shared with other stores), announcing its commits on
    /// `notificationChannel` (the default channel is shared with every other test's stores).
    func makeStore(
        schema: String? = nil, maximumAttempts: Int = 10, notificationChannel: String = "anchorage_changes"
    ) async throws -> PostgresStore {
        let schema = schema ?? Self.freshSchemaName()
        schemas.withLock { $0.append(schema) }
        return try await PostgresStore(
            client: client,
            configuration: PostgresStore.Configuration(
                schema: schema, notificationChannel: notificationChannel, maximumAttempts: maximumAttempts,
                logger: quietLogger("Anchorage.PostgresStore")))
    }

    /// Drops every schema the stores of this database were made in.
    fileprivate func dropSchemas() async {
        for schema in Set(schemas.withLock { $0 }) {
            _ = try? await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"))
        }
    }
}


/// A logger that reports warnings and worse only.
func quietLogger(_ label: String) -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = .warning
    return logger
}

/// The pool configuration for the test server.
func testClientConfiguration(maximumConnections: Int = 12) async throws -> PostgresClient.Configuration {
    let address = try #require(await TestPostgresServer.address, "no PostgreSQL server is available")
    var configuration = PostgresClient.Configuration(
        host: address.host, port: address.port, username: address.username, password: nil,
        database: address.database, tls: .disable)
    configuration.options.maximumConnections = maximumConnections
    // The settings a store's own pool runs with, so the contract holds with them.
    configuration.options.additionalStartupParameters = PostgresStore.sessionSettings.map { ($0.name, $0.value) }
    return configuration
}

/// Runs a connection pool on the test server for the duration of `body`,
/// then drops the schemas the body's stores used and shuts the pool down.
func withTestDatabase<Result: Sendable>(
    maximumConnections: Int = 12, _ body: (TestDatabase) async throws -> Result
) async throws -> Result {
    let client = PostgresClient(
        configuration: try await testClientConfiguration(maximumConnections: maximumConnections),
        backgroundLogger: quietLogger("Anchorage.tests.pool"))
    return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        let database = TestDatabase(client: client)
        do {
            let result = try await body(database)
            await database.dropSchemas()
            return result
        } catch {
            await database.dropSchemas()
            throw error
        }
    }
}

/// A record of collection `notes` with a whole-second version time.
func note(
    _ id: RecordID, _ fields: [String: SyncValue] = [:], collection: CollectionID = "notes", deleted: Bool = false,
    second: Int = 0
) -> SyncRecord {
    SyncRecord(
        collection: collection, id: id, fields: fields, isDeleted: deleted,
        version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(second)), node: "tests"))
}

/// Commits `records` in one transaction of `account`.
func put(_ records: [SyncRecord], in store: any SyncStore, for account: AccountID = "ada") async throws {
    try await store.transaction(for: account) { tx in
        for record in records { try await tx.put(record) }
    }
}
