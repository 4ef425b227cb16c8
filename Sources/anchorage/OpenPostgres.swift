import CoreMetrics
import PostgresNIO
import SyncCore
import SyncPostgres

/// Runs `body` with a ``PostgresStore`` on the database at `location`, reading the changes that answer pulls
/// from the hot standby at `readReplica` when there is one.
func withPostgresStore<Result: Sendable>(
    at location: PostgresLocation, readReplica: PostgresLocation? = nil, _ body: (any SyncStore) async throws -> Result
) async throws -> Result {
    var configuration = PostgresStore.Configuration()
    if readReplica != nil { configuration.replicaReadObserver = replicaReadCounter() }
    do {
        return try await PostgresStore.withStore(
            client: location.clientConfiguration, readReplica: readReplica?.clientConfiguration, configuration: configuration
        ) { store in try await body(store) }
    } catch let error as StoreError {
        throw failure("cannot use the PostgreSQL store at \(location): \(error)", code: 74)
    }
}

/// Counts each read of changes as `anchorage_postgres_change_reads_total{served_by="replica"|"primary"}`.
private func replicaReadCounter() -> @Sendable (PostgresStore.ReplicaReadSource) -> Void {
    let counters = Dictionary(
        uniqueKeysWithValues: PostgresStore.ReplicaReadSource.allCases.map { source in
            (source, Counter(label: "anchorage_postgres_change_reads_total", dimensions: [("served_by", source.rawValue)]))
        })
    return { source in counters[source]?.increment() }
}

extension PostgresLocation {
    /// The pool configuration that reaches this database (without TLS).
    var clientConfiguration: PostgresClient.Configuration {
        PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
    }
}
