public import Logging
public import PostgresNIO

extension PostgresStore {
    /// The server that answered a read of changes of a store with a read replica.
    public enum ReplicaReadSource: String, Sendable, CaseIterable {
        /// The read replica, once it had replayed everything the primary had written when the read began.
        case replica
        /// The primary: the read replica was behind, failed, could not be reached, or was left alone for
        /// ``Configuration/replicaRetryDelay`` after one of those.
        case primary
    }

    /// How many reads of changes each server answered, since the store was opened.
    public struct ReplicaReadCounts: Sendable, Hashable {
        /// The reads the read replica answered.
        public var replica: Int
        /// The reads the primary answered instead.
        public var primary: Int

        /// Makes counts.
        public init(replica: Int = 0, primary: Int = 0) {
            self.replica = replica
            self.primary = primary
        }
    }

    /// The pool of the hot standby that answers reads of changes, `nil` when the store has none.
    public var readReplica: PostgresClient? { replicaReads?.replica }

    /// How many reads of changes each server answered since the store was opened; all zero without a
    /// read replica.
    public var replicaReadCounts: ReplicaReadCounts { replicaReads?.counts ?? ReplicaReadCounts() }

    /// Makes connection pools for the primary at `clientConfiguration` and for its hot standby at
    /// `readReplica` (both with ``sessionSettings``), runs them, opens a store on them (reads of changes on
    /// the standby, see ``PostgresStore``'s "Read replica") and hands it to `body`; shuts the pools down when
    /// `body` returns or throws.
    ///
    /// ```swift
    /// let primary = PostgresClient.Configuration(
    ///     host: "db1.internal", port: 5432, username: "anchorage", password: secret, database: "sync", tls: .disable)
    /// let standby = PostgresClient.Configuration(
    ///     host: "db2.internal", port: 5432, username: "anchorage", password: secret, database: "sync", tls: .disable)
    /// try await PostgresStore.withStore(client: primary, readReplica: standby) { store in
    ///     // hand `store` to the servers
    /// }
    /// ```
    /// - Parameters:
    ///   - clientConfiguration: how to reach the primary.
    ///   - readReplica: how to reach a hot standby of the primary; `nil` for none.
    ///   - configuration: where the store keeps its tables and how it uses the standby.
    ///   - backgroundLogger: where postgres-nio logs the pools' background work.
    ///   - body: the work to do with the store; the store must not be used after it returns.
    /// - Returns: what `body` returns.
    /// - Throws: what opening the store (``SyncCore/StoreError``) or `body` throws.
    public static func withStore<Result: Sendable>(
        client clientConfiguration: PostgresClient.Configuration,
        readReplica: PostgresClient.Configuration?,
        configuration: Configuration = Configuration(),
        backgroundLogger: Logger = Logger(label: "Anchorage.PostgresStore.pool"),
        _ body: (PostgresStore) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: withSessionSettings(clientConfiguration), backgroundLogger: backgroundLogger)
        let replica = readReplica.map {
            PostgresClient(configuration: withSessionSettings($0), backgroundLogger: backgroundLogger)
        }
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask { await client.run() }
            if let replica { group.addTask { await replica.run() } }
            defer { group.cancelAll() }
            let store = try await PostgresStore(client: client, readReplica: replica, configuration: configuration)
            return try await body(store)
        }
    }
}
