#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GRDB
import SyncCore

/// The SQL of ``SQLiteStore``: every statement names the account, so no
/// query can return another account's rows.
enum StoreQueries {
    /// The columns a ``StoredRecord`` is read from, in the order ``encodedStoredRecord(_:)`` expects.
    private static let recordColumns = "collection, record_id, position, is_deleted, modified_at, node, fields"
    /// The id of the account named by the statement's first argument.
    private static let accountIDOfName = "(SELECT id FROM account WHERE name = ?)"
    /// The most collections a change query binds as parameters; larger filters are applied while scanning.
    static let maximumBoundCollections = 256

    // MARK: Reading

    /// How many transactions of `account` have committed (0 before the first).
    static func revision(of account: AccountID, _ db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(sql: "SELECT revision FROM account WHERE name = ?")
        return try Int64.fetchOne(statement, arguments: [account.rawValue]) ?? 0
    }

    /// The position of the latest record write of `account`.
    static func latestPosition(of account: AccountID, _ db: Database) throws -> ChangePosition {
        let statement = try db.cachedStatement(sql: "SELECT last_position FROM account WHERE name = ?")
        return try ChangePosition(position(Int64.fetchOne(statement, arguments: [account.rawValue]) ?? 0))
    }

    /// The largest number of keys whose batched read keeps its prepared statement in the connection's cache.
    static let cachedKeyCounts = 16

    /// The records at `keys` that were ever written, by key, their fields left in the stored form: one
    /// query per collection among the keys.
    static func records(at keys: [RecordKey], of account: AccountID, _ db: Database) throws -> [RecordKey: EncodedStoredRecord] {
        var found: [RecordKey: EncodedStoredRecord] = [:]
        // At most BufferedTransaction.keysPerRead keys: within SQLite's 999 bound parameters.
        for (collection, keys) in Dictionary(grouping: keys, by: \.collection) {
            let ids = Array(Set(keys.map(\.id.rawValue)))
            let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
            let arguments = StatementArguments([account.rawValue, collection.rawValue]) + StatementArguments(ids)
            let sql = """
                SELECT \(recordColumns) FROM record
                WHERE account_id = \(accountIDOfName) AND collection = ? AND record_id IN (\(placeholders))
                """
            // A sync's small reads (a fast sync's few keys) reuse a prepared statement, one per count of keys;
            // a page's large ones are prepared each time, so the cache never holds hundreds of variants.
            let rows =
                ids.count <= cachedKeyCounts
                ? try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
                : try Row.fetchAll(db, sql: sql, arguments: arguments)
            for row in rows {
                let stored = try encodedStoredRecord(row)
                found[stored.key] = stored
            }
        }
        return found
    }

    static func records(
        in collection: CollectionID, after id: RecordID?, limit: Int, of account: AccountID, _ db: Database
    ) throws -> [EncodedStoredRecord] {
        let rows: [Row]
        if let id {
            let statement = try db.cachedStatement(
                sql: """
                    SELECT \(recordColumns) FROM record
                    WHERE account_id = \(accountIDOfName) AND collection = ? AND record_id > ?
                    ORDER BY record_id LIMIT ?
                    """)
            rows = try Row.fetchAll(
                statement, arguments: [account.rawValue, collection.rawValue, id.rawValue, Int64(limit)])
        } else {
            let statement = try db.cachedStatement(
                sql: """
                    SELECT \(recordColumns) FROM record
                    WHERE account_id = \(accountIDOfName) AND collection = ?
                    ORDER BY record_id LIMIT ?
                    """)
            rows = try Row.fetchAll(statement, arguments: [account.rawValue, collection.rawValue, Int64(limit)])
        }
        return try rows.map(encodedStoredRecord)
    }

    /// The committed records of `account` written after `position`, in order of position, their fields in the stored form.
    static func encodedChanges(
        of account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int,
        _ db: Database
    ) throws -> EncodedChangeBatch {
        let after = Int64(clamping: position.rawValue)
        // One more than asked tells whether more follow.
        let fetchCount = Int64(clamping: limit) == .max ? Int64.max : Int64(limit) + 1
        let stored: [EncodedStoredRecord]
        if let collections, collections.isEmpty {
            stored = []
        } else if let collections, collections.count <= maximumBoundCollections {
            let names = collections.map(\.rawValue).sorted()
            let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
            let statement = try db.cachedStatement(
                sql: """
                    SELECT \(recordColumns) FROM record
                    WHERE account_id = \(accountIDOfName) AND position > ? AND collection IN (\(placeholders))
                    ORDER BY position LIMIT ?
                    """)
            let arguments = StatementArguments([account.rawValue, after] as [any DatabaseValueConvertible])
                + StatementArguments(names) + StatementArguments([fetchCount])
            stored = try Row.fetchAll(statement, arguments: arguments).map(encodedStoredRecord)
        } else {
            stored = try scanChanges(of: account, after: after, in: collections, count: fetchCount, db)
        }
        let hasMore = stored.count > limit
        let records = hasMore ? Array(stored.prefix(limit)) : stored
        return EncodedChangeBatch(records: records, lastPosition: records.last?.position ?? position, hasMore: hasMore)
    }

    /// Up to `count` changes after `after`, filtered by `collections` in Swift
    /// (for filters with too many collections to bind).
    private static func scanChanges(
        of account: AccountID, after: Int64, in collections: Set<CollectionID>?, count: Int64, _ db: Database
    ) throws -> [EncodedStoredRecord] {
        let statement = try db.cachedStatement(
            sql: """
                SELECT \(recordColumns) FROM record
                WHERE account_id = \(accountIDOfName) AND position > ?
                ORDER BY position
                """)
        let cursor = try Row.fetchCursor(statement, arguments: [account.rawValue, after])
        var found: [EncodedStoredRecord] = []
        while Int64(found.count) < count, let row = try cursor.next() {
            let stored = try encodedStoredRecord(row)
            if collections?.contains(stored.key.collection) ?? true { found.append(stored) }
        }
        return found
    }

    /// The records at `keys`, the metadata value of `peer` under `key`, and the account's latest position
    /// and revision, in one statement, so on one snapshot: what a push reads before it writes; `nil` when
    /// the keys are not all of one collection, or name more than ``cachedKeyCounts`` ids.
    ///
    /// A compound `SELECT` of three parts, told apart by its last column: records (0), the metadata value
    /// in `fields` (1), and the account's row with its last position in `position` and its revision in
    /// `is_deleted` (2). One statement instead of five (a read of the revision before and after the three
    /// reads, which must agree) was a tenth of a fast sync's time on the server.
    static func recordsWithMetadata(
        at keys: [RecordKey], metadata key: String, for peer: PeerID, of account: AccountID, _ db: Database
    ) throws -> (records: [RecordKey: EncodedStoredRecord], metadata: SyncValue?, latest: ChangePosition, revision: Int64)? {
        let ids = Array(Set(keys.map(\.id.rawValue)))
        guard let collection = keys.first?.collection, ids.count <= cachedKeyCounts,
            keys.allSatisfy({ $0.collection == collection })
        else { return nil }
        let placeholders = (0..<ids.count).map { "?\($0 + 5)" }.joined(separator: ", ")
        let statement = try db.cachedStatement(
            sql: """
                SELECT \(recordColumns), 0 FROM record
                WHERE account_id = (SELECT id FROM account WHERE name = ?1) AND collection = ?2
                    AND record_id IN (\(placeholders))
                UNION ALL
                SELECT NULL, NULL, NULL, NULL, NULL, NULL, value, 1 FROM peer_metadata
                WHERE account_id = (SELECT id FROM account WHERE name = ?1) AND peer = ?3 AND key = ?4
                UNION ALL
                SELECT NULL, NULL, last_position, revision, NULL, NULL, NULL, 2 FROM account WHERE name = ?1
                """)
        let arguments =
            StatementArguments([account.rawValue, collection.rawValue, peer.rawValue, key]) + StatementArguments(ids)
        var found: (records: [RecordKey: EncodedStoredRecord], metadata: SyncValue?, latest: ChangePosition, revision: Int64) =
            ([:], nil, .start, 0)
        for row in try Row.fetchAll(statement, arguments: arguments) {
            switch try row.decode(Int64.self, atIndex: 7) {
            case 0:
                let stored = try encodedStoredRecord(row)
                found.records[stored.key] = stored
            case 1:
                found.metadata = try StoredValueFormat.decode(row.decode(Data.self, atIndex: 6))
            default:
                found.latest = ChangePosition(try position(row.decode(Int64.self, atIndex: 2)))
                found.revision = try row.decode(Int64.self, atIndex: 3)
            }
        }
        return found
    }

    /// The committed metadata value of `account` for `peer` under `key`.
    static func metadata(_ key: String, for peer: PeerID, of account: AccountID, _ db: Database) throws -> SyncValue? {
        let statement = try db.cachedStatement(
            sql: "SELECT value FROM peer_metadata WHERE account_id = \(accountIDOfName) AND peer = ? AND key = ?")
        guard let blob = try Data.fetchOne(statement, arguments: [account.rawValue, peer.rawValue, key]) else {
            return nil
        }
        return try StoredValueFormat.decode(blob)
    }

    /// The committed metadata values of `account` for `peer` under `keys` (at most
    /// `BufferedTransaction.keysPerRead`, within SQLite's 999 bound parameters), by key.
    static func metadata(at keys: [String], for peer: PeerID, of account: AccountID, _ db: Database) throws -> [String: SyncValue] {
        let unique = Array(Set(keys))
        guard !unique.isEmpty else { return [:] }
        let placeholders = Array(repeating: "?", count: unique.count).joined(separator: ", ")
        let sql = """
            SELECT key, value FROM peer_metadata
            WHERE account_id = \(accountIDOfName) AND peer = ? AND key IN (\(placeholders))
            """
        let arguments = StatementArguments([account.rawValue, peer.rawValue]) + StatementArguments(unique)
        let rows =
            unique.count <= cachedKeyCounts
            ? try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
            : try Row.fetchAll(db, sql: sql, arguments: arguments)
        var found: [String: SyncValue] = [:]
        for row in rows {
            found[try row.decode(String.self, atIndex: 0)] = try StoredValueFormat.decode(row.decode(Data.self, atIndex: 1))
        }
        return found
    }

    /// The problems `PRAGMA integrity_check` and `PRAGMA foreign_key_check` find; empty when there are none.
    static func integrityProblems(_ db: Database) throws -> [String] {
        let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
        let foreignKeys = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").map { row in
            "foreign key violation: \(row)"
        }
        return integrity + foreignKeys
    }

    // MARK: Writing

    /// Applies `writes` of `account` inside the caller's write transaction:
    /// hands out positions, writes records and metadata, and counts the
    /// account's revision up.
    /// - Parameter expectedRevision: the revision the transaction's reads saw,
    ///   or `nil` when it read nothing.
    /// - Returns: The positions the commit handed out.
    /// - Throws: ``RevisionConflict`` when another process committed to the
    ///   account since — before anything is written, so the caller's
    ///   transaction can go on with other commits — or an error of SQLite.
    @discardableResult
    static func commit(
        _ writes: PendingWrites, of account: AccountID, expectedRevision: Int64?, _ db: Database
    ) throws -> CommittedPositions {
        // The revision the reads saw must still be the account's: otherwise nothing is written. (Reads see
        // revision 0 for an account without a row; account rows are never deleted.) The account's row is read,
        // then updated last by its id: the upsert with RETURNING that wrote it before took a statement journal,
        // into which SQLite copies each page the statement changes, in 64 KiB allocated and freed every time.
        let accountID: Int64
        var lastPosition: Int64
        let found = try db.cachedStatement(sql: "SELECT id, last_position, revision FROM account WHERE name = ?")
        if let row = try Row.fetchOne(found, arguments: [account.rawValue]) {
            if let expectedRevision, try row.decode(Int64.self, atIndex: 2) != expectedRevision { throw RevisionConflict() }
            accountID = try row.decode(atIndex: 0)
            lastPosition = try row.decode(atIndex: 1)
        } else {
            if let expectedRevision, expectedRevision != 0 { throw RevisionConflict() }
            try db.cachedStatement(sql: "INSERT INTO account(name) VALUES (?)").execute(arguments: [account.rawValue])
            accountID = db.lastInsertedRowID
            lastPosition = 0
        }
        let positionBefore = lastPosition

        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO record(account_id, collection, record_id, position, is_deleted, modified_at, node, fields)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(account_id, collection, record_id) DO UPDATE SET
                    position = excluded.position, is_deleted = excluded.is_deleted,
                    modified_at = excluded.modified_at, node = excluded.node, fields = excluded.fields
                """)
        let delete = try db.cachedStatement(
            sql: "DELETE FROM record WHERE account_id = ? AND collection = ? AND record_id = ?")
        for (key, write) in writes.records {
            switch write {
            case .put(let encoded):
                guard lastPosition < Int64.max else {
                    throw StoreError(.invalidArgument, "account \(account) has used every change position")
                }
                lastPosition += 1
                try upsert.execute(arguments: [
                    accountID, key.collection.rawValue, key.id.rawValue, lastPosition, encoded.isDeleted,
                    encoded.version.modifiedAt.timeIntervalSinceReferenceDate, encoded.version.node.rawValue, encoded.fields,
                ])
            case .purge:
                try delete.execute(arguments: [accountID, key.collection.rawValue, key.id.rawValue])
            }
        }

        // Keys are compared as bytes: `substr` of a blob counts bytes, and the range on `key` lets the
        // primary key's index find the first one.
        let removePrefix = try db.cachedStatement(
            sql: """
                DELETE FROM peer_metadata
                WHERE account_id = ? AND peer = ? AND key >= ? AND substr(CAST(key AS BLOB), 1, ?) = CAST(? AS BLOB)
                """)
        for (peer, prefix) in writes.removedMetadataPrefixes {
            try removePrefix.execute(arguments: [accountID, peer.rawValue, prefix, prefix.utf8.count, prefix])
        }
        let setMetadata = try db.cachedStatement(
            sql: """
                INSERT INTO peer_metadata(account_id, peer, key, value) VALUES (?, ?, ?, ?)
                ON CONFLICT(account_id, peer, key) DO UPDATE SET value = excluded.value
                """)
        let removeMetadata = try db.cachedStatement(
            sql: "DELETE FROM peer_metadata WHERE account_id = ? AND peer = ? AND key = ?")
        for (peer, key, write) in writes.metadata {
            if let blob = write.blob {
                try setMetadata.execute(arguments: [accountID, peer.rawValue, key, blob])
            } else {
                try removeMetadata.execute(arguments: [accountID, peer.rawValue, key])
            }
        }

        try db.cachedStatement(sql: "UPDATE account SET last_position = ?, revision = revision + 1 WHERE id = ?")
            .execute(arguments: [lastPosition, accountID])
        return try CommittedPositions(before: ChangePosition(position(positionBefore)), latest: ChangePosition(position(lastPosition)))
    }

    // MARK: Rows

    /// The record of a row of ``recordColumns``, its fields left in the stored form.
    private static func encodedStoredRecord(_ row: Row) throws -> EncodedStoredRecord {
        try EncodedStoredRecord(
            key: RecordKey(
                collection: CollectionID(row.decode(String.self, atIndex: 0)), id: RecordID(row.decode(String.self, atIndex: 1))),
            isDeleted: row.decode(Bool.self, atIndex: 3),
            version: RecordVersion(
                modifiedAt: Date(timeIntervalSinceReferenceDate: row.decode(Double.self, atIndex: 4)),
                node: PeerID(row.decode(String.self, atIndex: 5))),
            position: ChangePosition(position(row.decode(Int64.self, atIndex: 2))),
            fields: row.decode(Data.self, atIndex: 6))
    }

    /// A stored position as a ``ChangePosition`` value.
    private static func position(_ stored: Int64) throws -> UInt64 {
        guard let position = UInt64(exactly: stored) else {
            throw StoreError(.corrupt, "a stored change position is negative: \(stored)")
        }
        return position
    }
}
