import Logging
import PostgresNIO
import SyncCore

/// The tables of ``PostgresStore`` and the migrations that create them, all
/// in the configured schema (``PostgresStore/Configuration/schema``).
///
/// - `schema_migration`: one row per migration applied, by version.
/// - `account`: one row per account that ever committed a write, with the
///   last position it handed out (`last_position`, the per-account change
///   sequence) and `revision`, which every committing transaction of the
///   account increments. Its row lock orders the commits of one account.
/// - `record`: the latest version of every record, tombstones included, with
///   the position of its last write. The primary key pages a collection in id
///   order; `record_position` makes positions unique per account and serves
///   "changes after position".
/// - `peer_metadata`: small values per account, peer and key.
///
/// Names are compared by their UTF-8 bytes (`COLLATE "C"`), as in
/// ``PostgresStore``'s documentation.
enum StoreSchema {
    /// One step of the schema.
    struct Migration {
        /// The version the schema has after this step.
        var version: Int32
        /// What the step does, stored with it.
        var description: String
        /// The statements of the step, in order; `{schema}` stands for the quoted schema name.
        var statements: [String]
    }

    /// Every migration, in order of version.
    static let migrations: [Migration] = [
        Migration(
            version: 1, description: "accounts, records, change sequence, peer metadata",
            statements: [
                """
                CREATE TABLE {schema}.account (
                    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    name TEXT COLLATE "C" NOT NULL UNIQUE,
                    last_position BIGINT NOT NULL DEFAULT 0 CHECK (last_position >= 0),
                    revision BIGINT NOT NULL DEFAULT 0
                )
                """,
                """
                CREATE TABLE {schema}.record (
                    account_id BIGINT NOT NULL REFERENCES {schema}.account(id),
                    collection TEXT COLLATE "C" NOT NULL,
                    record_id TEXT COLLATE "C" NOT NULL,
                    position BIGINT NOT NULL CHECK (position > 0),
                    is_deleted BOOLEAN NOT NULL,
                    modified_at DOUBLE PRECISION NOT NULL,
                    node TEXT NOT NULL,
                    fields BYTEA NOT NULL,
                    PRIMARY KEY (account_id, collection, record_id)
                )
                """,
                "CREATE UNIQUE INDEX record_position ON {schema}.record(account_id, position)",
                """
                CREATE TABLE {schema}.peer_metadata (
                    account_id BIGINT NOT NULL REFERENCES {schema}.account(id),
                    peer TEXT COLLATE "C" NOT NULL,
                    key TEXT COLLATE "C" NOT NULL,
                    value BYTEA NOT NULL,
                    PRIMARY KEY (account_id, peer, key)
                )
                """,
            ])
    ]

    /// The newest version this code knows.
    static var currentVersion: Int32 { migrations.last?.version ?? 0 }

    /// Brings the schema `schema` to ``currentVersion``, creating it if missing.
    ///
    /// Runs in one transaction under an advisory lock on the schema's name, so
    /// several server processes starting at once migrate it exactly once.
    /// - Throws: ``SyncCore/StoreError/Code/corrupt`` when the schema was
    ///   written by a newer version, or what the database throws.
    static func migrate(schema: String, client: PostgresClient, logger: Logger) async throws {
        let quoted = "\"\(schema)\""
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtextextended(\("anchorage schema " + schema), 0))",
                    logger: logger)
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(quoted)"), logger: logger)
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            CREATE TABLE IF NOT EXISTS \(quoted).schema_migration (
                                version INTEGER PRIMARY KEY,
                                description TEXT NOT NULL,
                                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                            )
                            """), logger: logger)
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT COALESCE(MAX(version), 0) FROM \(quoted).schema_migration"),
                    logger: logger)
                var applied: Int32 = 0
                for try await version in rows.decode(Int32.self) { applied = version }
                guard applied <= currentVersion else {
                    throw StoreError(
                        .corrupt,
                        "schema \(schema) has version \(applied), written by a newer version of Anchorage; "
                            + "this version knows up to \(currentVersion)")
                }
                for migration in migrations where migration.version > applied {
                    logger.info(
                        "migrating the store schema",
                        metadata: ["schema": "\(schema)", "version": "\(migration.version)"])
                    for statement in migration.statements {
                        let sql = statement.replacing("{schema}", with: quoted)
                        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                    }
                    try await connection.query(
                        """
                        INSERT INTO \(unescaped: quoted).schema_migration(version, description)
                        VALUES (\(migration.version), \(migration.description))
                        """, logger: logger)
                }
                try await connection.query("COMMIT", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

}
