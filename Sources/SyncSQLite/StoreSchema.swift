import GRDB

/// The tables of ``SQLiteStore`` and the migrations that create them.
///
/// - `account`: one row per account that ever committed a write, with the
///   last position it handed out (`last_position`, the per-account change
///   sequence) and `revision`, which every committing transaction of the
///   account increments (used to detect writes by another process).
/// - `record`: the latest version of every record, tombstones included, with
///   the position of its last write. `record_key` makes `(account, collection,
///   id)` unique and pages a collection in id order; `record_position` makes
///   positions unique per account and serves "changes after position".
/// - `peer_metadata`: small values per account, peer and key.
///
/// Every row belongs to one account through `account_id`, and every query
/// names it, so one account never reads another's rows. Tables are `STRICT`,
/// so SQLite refuses a value of the wrong type instead of storing it.
enum StoreSchema {
    /// The migrator that brings a database to the schema of this version.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: accounts, records, change sequence, peer metadata") { db in
            try db.execute(
                sql: """
                    CREATE TABLE account (
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE,
                        last_position INTEGER NOT NULL DEFAULT 0 CHECK (last_position >= 0),
                        revision INTEGER NOT NULL DEFAULT 0
                    ) STRICT;

                    CREATE TABLE record (
                        account_id INTEGER NOT NULL REFERENCES account(id),
                        collection TEXT NOT NULL,
                        record_id TEXT NOT NULL,
                        position INTEGER NOT NULL CHECK (position > 0),
                        is_deleted INTEGER NOT NULL CHECK (is_deleted IN (0, 1)),
                        modified_at REAL NOT NULL,
                        node TEXT NOT NULL,
                        fields BLOB NOT NULL
                    ) STRICT;
                    CREATE UNIQUE INDEX record_key ON record(account_id, collection, record_id);
                    CREATE UNIQUE INDEX record_position ON record(account_id, position);

                    CREATE TABLE peer_metadata (
                        account_id INTEGER NOT NULL REFERENCES account(id),
                        peer TEXT NOT NULL,
                        key TEXT NOT NULL,
                        value BLOB NOT NULL,
                        PRIMARY KEY (account_id, peer, key)
                    ) STRICT, WITHOUT ROWID;
                    """)
        }
        return migrator
    }()
}
