public import Logging
import SyncCore

extension PostgresStore {
    /// Where a ``PostgresStore`` keeps its tables and how it uses them.
    ///
    /// ```swift
    /// var configuration = PostgresStore.Configuration()
    /// configuration.schema = "sync"            // tables in schema "sync" instead of "anchorage"
    /// configuration.maximumAttempts = 20      // many servers writing to the same accounts
    /// let store = try await PostgresStore(client: client, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The PostgreSQL schema that holds the store's tables, created if missing: `anchorage` unless changed.
        ///
        /// Lowercase ASCII letters, digits and `_`, starting with a letter or `_`, at most 63 characters.
        /// Stores with different schemas in one database are independent of each other.
        public var schema: String
        /// The channel of the `NOTIFY` sent when a transaction that wrote records commits:
        /// `anchorage_changes` unless changed. Same rules as ``schema``.
        public var notificationChannel: String
        /// How many times a transaction runs its body when another process keeps
        /// changing the same account before it can commit; at least 1.
        public var maximumAttempts: Int
        /// Where the store logs what it does (schema changes, listener failures, a read replica that
        /// stops or starts serving) and where postgres-nio logs the store's queries.
        public var logger: Logger
        /// With a read replica: how long a read of changes waits for the replica to replay everything the
        /// primary had written when the read began, before it reads from the primary instead; 100 ms unless
        /// changed.
        public var replicaWait: Duration
        /// With a read replica: how long reads of changes go straight to the primary after the replica
        /// failed or did not catch up in time, before it is tried again; 1 second unless changed.
        public var replicaRetryDelay: Duration
        /// With a read replica: called after each read of changes with the server that answered it, for
        /// metrics (`anchorage serve` counts them as `anchorage_postgres_change_reads_total{served_by}`).
        public var replicaReadObserver: (@Sendable (ReplicaReadSource) -> Void)?

        /// Makes a configuration.
        /// - Parameters:
        ///   - schema: the schema that holds the tables.
        ///   - notificationChannel: the channel of the change notifications.
        ///   - maximumAttempts: how many times a transaction body runs before giving up on conflicts.
        ///   - logger: where the store logs.
        public init(
            schema: String = "anchorage",
            notificationChannel: String = "anchorage_changes",
            maximumAttempts: Int = 10,
            logger: Logger = Logger(label: "Anchorage.PostgresStore")
        ) {
            self.schema = schema
            self.notificationChannel = notificationChannel
            self.maximumAttempts = maximumAttempts
            self.logger = logger
            replicaWait = .milliseconds(100)
            replicaRetryDelay = .seconds(1)
            replicaReadObserver = nil
        }

        /// Checks the names that go into SQL as identifiers.
        /// - Throws: ``SyncCore/StoreError/Code/invalidArgument`` for a name that is not a plain identifier.
        func validate() throws(StoreError) {
            for (what, name) in [("schema", schema), ("notification channel", notificationChannel)] {
                guard Self.isPlainIdentifier(name) else {
                    throw StoreError(
                        .invalidArgument,
                        "the \(what) name \"\(name)\" is not lowercase ASCII letters, digits and _ "
                            + "(starting with a letter or _, at most 63 characters)")
                }
            }
        }

        /// Whether `name` can be written into SQL unquoted and unchanged.
        private static func isPlainIdentifier(_ name: String) -> Bool {
            let bytes = Array(name.utf8)
            guard let first = bytes.first, bytes.count <= 63 else { return false }
            let isLetter = { (byte: UInt8) in (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || byte == UInt8(ascii: "_") }
            let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
            return isLetter(first) && bytes.allSatisfy { isLetter($0) || isDigit($0) }
        }
    }
}
