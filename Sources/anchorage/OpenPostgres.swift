import PostgresNIO
import SyncCore
import SyncPostgres

/// Runs `body` with a ``PostgresStore`` on the database at `location`.
func withPostgresStore<Result: Sendable>(
    at location: PostgresLocation, _ body: (any SyncStore) async throws -> Result
) async throws -> Result {
    let configuration = PostgresClient.Configuration(
        host: location.host, port: location.port, username: location.username, password: location.password,
        database: location.database, tls: .disable)
    do {
        return try await PostgresStore.withStore(client: configuration) { store in try await body(store) }
    } catch let error as StoreError {
        throw failure("cannot use the PostgreSQL store at \(location): \(error)", code: 74)
    }
}
