import FoundationEssentials
import Logging
import NIOCore
import PostgresNIO
import SyncCore

/// The SQL of ``PostgresStore``: every statement names the account, so no
/// query can return another account's rows.
///
/// Each read is one statement, so it sees one consistent snapshot; the reads
/// a transaction makes also return the account's revision from that same
/// snapshot.
struct StoreQueries: Sendable {
    /// The quoted schema name, ready to put before a table name.
    let schema: String
    /// Where postgres-nio logs the queries.
    let logger: Logger

    /// The columns a ``StoredRecord`` is read from, in the order ``storedRecord(_:)`` expects.
    private static let recordColumns = "collection, record_id, position, is_deleted, modified_at, node, fields"
    /// The same columns of the join alias `r`.
    private static let joinedRecordColumns =
        "r.collection, r.record_id, r.position, r.is_deleted, r.modified_at, r.node, r.fields"

    /// The columns of a record row, optional because a join may find none.
    private typealias RecordColumns = (String?, String?, Int64?, Bool?, Double?, String?, Data?)

    init(schema: String, logger: Logger) {
        self.schema = "\"\(schema)\""
        self.logger = logger
    }

    // MARK: Reading outside transactions

    /// The position of the latest record write of `account`.
    func latestPosition(of account: AccountID, _ client: PostgresClient) async throws -> ChangePosition {
        let rows = try await client.query(
            "SELECT last_position FROM \(unescaped: schema).account WHERE name = \(account.rawValue)", logger: logger)
        var latest: Int64 = 0
        for try await position in rows.decode(Int64.self) { latest = position }
        return try ChangePosition(Self.position(latest))
    }

    /// The committed records of `account` written after `position`, in order of position.
    func changes(
        of account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int,
        _ client: PostgresClient
    ) async throws -> ChangeBatch {
        if let collections, collections.isEmpty {
            return ChangeBatch(records: [], lastPosition: position, hasMore: false)
        }
        let after = Int64(clamping: position.rawValue)
        // One more than asked tells whether more follow.
        let fetchCount = Int64(clamping: limit) == .max ? Int64.max : Int64(limit) + 1
        let rows: PostgresRowSequence
        if let collections {
            let names = collections.map(\.rawValue).sorted()
            rows = try await client.query(
                """
                SELECT \(unescaped: Self.recordColumns) FROM \(unescaped: schema).record
                WHERE account_id = (SELECT id FROM \(unescaped: schema).account WHERE name = \(account.rawValue))
                    AND position > \(after) AND collection = ANY(\(names))
                ORDER BY position LIMIT \(fetchCount)
                """, logger: logger)
        } else {
            rows = try await client.query(
                """
                SELECT \(unescaped: Self.recordColumns) FROM \(unescaped: schema).record
                WHERE account_id = (SELECT id FROM \(unescaped: schema).account WHERE name = \(account.rawValue))
                    AND position > \(after)
                ORDER BY position LIMIT \(fetchCount)
                """, logger: logger)
        }
        var stored: [StoredRecord] = []
        for try await columns in rows.decode(RecordColumns.self) {
            if let record = try Self.storedRecord(columns) { stored.append(record) }
        }
        let hasMore = stored.count > limit
        let records = hasMore ? Array(stored.prefix(limit)) : stored
        return ChangeBatch(records: records, lastPosition: records.last?.position ?? position, hasMore: hasMore)
    }

    // MARK: Reading inside transactions (with the account's revision)

    /// The committed records at `keys`, by key, and the account's revision: one query.
    func records(
        at keys: [RecordKey], of account: AccountID, _ client: PostgresClient
    ) async throws -> ([RecordKey: StoredRecord], revision: Int64) {
        let collections = keys.map(\.collection.rawValue)
        let ids = keys.map(\.id.rawValue)
        let rows = try await client.query(
            """
            SELECT a.revision, \(unescaped: Self.joinedRecordColumns)
            FROM (SELECT 1) AS one
            LEFT JOIN \(unescaped: schema).account a ON a.name = \(account.rawValue)
            LEFT JOIN \(unescaped: schema).record r
                ON r.account_id = a.id
                AND (r.collection, r.record_id) IN (SELECT * FROM unnest(\(collections)::text[], \(ids)::text[]))
            """, logger: logger)
        var found: [RecordKey: StoredRecord] = [:]
        var revision: Int64 = 0
        for try await row in rows {
            let (rowRevision, collection, id, position, isDeleted, modifiedAt, node, fields) = try row.decode(
                (Int64?, String?, String?, Int64?, Bool?, Double?, String?, Data?).self)
            revision = rowRevision ?? 0
            if let record = try Self.storedRecord((collection, id, position, isDeleted, modifiedAt, node, fields)) {
                found[record.record.key] = record
            }
        }
        return (found, revision)
    }

    /// Up to `limit` committed records of `collection` with ids after `id`, in id order, and the account's revision.
    func records(
        in collection: CollectionID, after id: RecordID?, limit: Int, of account: AccountID, _ client: PostgresClient
    ) async throws -> ([StoredRecord], revision: Int64) {
        let fetchLimit = Int64(clamping: limit)
        let rows = try await client.query(
            """
            SELECT a.revision, \(unescaped: Self.joinedRecordColumns)
            FROM (SELECT 1) AS one
            LEFT JOIN \(unescaped: schema).account a ON a.name = \(account.rawValue)
            LEFT JOIN LATERAL (
                SELECT \(unescaped: Self.recordColumns) FROM \(unescaped: schema).record
                WHERE account_id = a.id AND collection = \(collection.rawValue)
                    AND (\(id?.rawValue)::text IS NULL OR record_id > \(id?.rawValue)::text COLLATE "C")
                ORDER BY record_id COLLATE "C" LIMIT \(fetchLimit)
            ) AS r ON true
            ORDER BY r.record_id COLLATE "C"
            """, logger: logger)
        var found: [StoredRecord] = []
        var revision: Int64 = 0
        for try await row in rows {
            let (rowRevision, collection, id, position, isDeleted, modifiedAt, node, fields) = try row.decode(
                (Int64?, String?, String?, Int64?, Bool?, Double?, String?, Data?).self)
            revision = rowRevision ?? 0
            if let record = try Self.storedRecord((collection, id, position, isDeleted, modifiedAt, node, fields)) {
                found.append(record)
            }
        }
        return (found, revision)
    }

    /// The committed metadata value of `account` for `peer` under `key`, and the account's revision.
    func metadata(
        _ key: String, for peer: PeerID, of account: AccountID, _ client: PostgresClient
    ) async throws -> (SyncValue?, revision: Int64) {
        let rows = try await client.query(
            """
            SELECT a.revision, m.value
            FROM (SELECT 1) AS one
            LEFT JOIN \(unescaped: schema).account a ON a.name = \(account.rawValue)
            LEFT JOIN \(unescaped: schema).peer_metadata m
                ON m.account_id = a.id AND m.peer = \(peer.rawValue) AND m.key = \(key)
            """, logger: logger)
        var value: SyncValue?
        var revision: Int64 = 0
        for try await (rowRevision, blob) in rows.decode((Int64?, Data?).self) {
            revision = rowRevision ?? 0
            value = try blob.map { blob throws(StoreError) in try StoredValueFormat.decode(blob) }
        }
        return (value, revision)
    }

    // MARK: Writing

    /// Takes the row lock of `account`'s row inside the caller's open
    /// transaction on `connection` (making the row if the account has none), so
    /// no other transaction of the account commits until this one ends.
    func lockAccount(_ account: AccountID, _ connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO \(unescaped: schema).account AS a (name) VALUES (\(account.rawValue))
            ON CONFLICT (name) DO UPDATE SET revision = a.revision
            """, logger: logger)
    }

    /// Applies `writes` of `account` inside the caller's open transaction on
    /// `connection`: locks the account's row, hands out positions, writes
    /// records and metadata, and queues the change notification.
    ///
    /// The first statement inserts or updates the account's row, which takes
    /// its row lock until the transaction ends: another transaction of the
    /// same account waits there, and then reads the counter this one left.
    /// - Parameters:
    ///   - expectedRevision: the revision the transaction's reads saw, or `nil` when it read nothing.
    ///   - channel: the channel to notify when records were written.
    /// - Throws: ``RevisionConflict`` when another process committed to the
    ///   account since the reads, or what the database throws.
    func commit(
        _ writes: PendingWrites, of account: AccountID, expectedRevision: Int64?, notifying channel: String,
        _ connection: PostgresConnection
    ) async throws {
        let putCount = Int64(writes.records.count { if case .put = $0.write { true } else { false } })
        let accountRows = try await connection.query(
            """
            INSERT INTO \(unescaped: schema).account AS a (name, revision, last_position)
            VALUES (\(account.rawValue), 1, \(putCount))
            ON CONFLICT (name) DO UPDATE SET revision = a.revision + 1, last_position = a.last_position + \(putCount)
            RETURNING a.id, a.last_position - \(putCount), a.revision
            """, logger: logger)
        var accountRow: (Int64, Int64, Int64)?
        for try await row in accountRows.decode((Int64, Int64, Int64).self) { accountRow = row }
        guard let (accountID, firstBefore, revision) = accountRow else {
            throw StoreError(.corrupt, "the account row of \(account) could not be written")
        }
        if let expectedRevision, revision - 1 != expectedRevision { throw RevisionConflict() }

        // The transaction's record writes go in two statements whatever their number: the puts as one
        // upsert of arrays, each taking the next position in the order written, and the purges as one delete.
        var position = firstBefore
        var puts = RecordColumnArrays()
        var purged: (collections: [String], ids: [String]) = ([], [])
        for (key, write) in writes.records {
            switch write {
            case .put(let record, let fields):
                position += 1
                puts.append(key, position: position, record, fields: fields)
            case .purge:
                purged.collections.append(key.collection.rawValue)
                purged.ids.append(key.id.rawValue)
            }
        }
        if !puts.ids.isEmpty {
            try await connection.query(
                """
                INSERT INTO \(unescaped: schema).record AS r
                    (account_id, collection, record_id, position, is_deleted, modified_at, node, fields)
                SELECT \(accountID), * FROM unnest(
                    \(puts.collections)::text[], \(puts.ids)::text[], \(puts.positions)::bigint[],
                    \(puts.isDeleted)::boolean[], \(puts.modifiedAt)::double precision[], \(puts.nodes)::text[],
                    \(puts.fields)::bytea[])
                ON CONFLICT (account_id, collection, record_id) DO UPDATE SET
                    position = excluded.position, is_deleted = excluded.is_deleted,
                    modified_at = excluded.modified_at, node = excluded.node, fields = excluded.fields
                """, logger: logger)
        }
        if !purged.ids.isEmpty {
            try await connection.query(
                """
                DELETE FROM \(unescaped: schema).record
                WHERE account_id = \(accountID)
                    AND (collection, record_id) IN (SELECT * FROM unnest(\(purged.collections)::text[], \(purged.ids)::text[]))
                """, logger: logger)
        }

        for (peer, key, write) in writes.metadata {
            if let blob = write.blob {
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: schema).peer_metadata (account_id, peer, key, value)
                    VALUES (\(accountID), \(peer.rawValue), \(key), \(blob))
                    ON CONFLICT (account_id, peer, key) DO UPDATE SET value = excluded.value
                    """, logger: logger)
            } else {
                try await connection.query(
                    """
                    DELETE FROM \(unescaped: schema).peer_metadata
                    WHERE account_id = \(accountID) AND peer = \(peer.rawValue) AND key = \(key)
                    """, logger: logger)
            }
        }

        // Delivered by the server when (and only if) the transaction commits.
        if putCount > 0 {
            try await connection.query(
                "SELECT pg_notify(\(channel), \(Self.notificationPayload(for: account, writes)))", logger: logger)
        }
    }

    /// The columns of records to write, one array per column, for an upsert of `unnest`ed arrays.
    private struct RecordColumnArrays {
        var collections: [String] = []
        var ids: [String] = []
        var positions: [Int64] = []
        var isDeleted: [Bool] = []
        var modifiedAt: [Double] = []
        var nodes: [String] = []
        var fields: [ByteBuffer] = []

        mutating func append(_ key: RecordKey, position: Int64, _ record: SyncRecord, fields blob: Data) {
            collections.append(key.collection.rawValue)
            ids.append(key.id.rawValue)
            positions.append(position)
            isDeleted.append(record.isDeleted)
            modifiedAt.append(record.version.modifiedAt.timeIntervalSinceReferenceDate)
            nodes.append(record.version.node.rawValue)
            fields.append(ByteBuffer(bytes: blob))
        }
    }

    // MARK: Rows

    /// The record in a row of ``recordColumns``, or `nil` when a join found none.
    private static func storedRecord(_ columns: RecordColumns) throws -> StoredRecord? {
        guard let collection = columns.0 else { return nil }
        guard let id = columns.1, let position = columns.2, let isDeleted = columns.3, let modifiedAt = columns.4,
            let node = columns.5, let blob = columns.6
        else {
            throw StoreError(.corrupt, "a stored record of collection \(collection) has empty columns")
        }
        let record = SyncRecord(
            collection: CollectionID(collection),
            id: RecordID(id),
            fields: try StoredValueFormat.decodeFields(blob),
            isDeleted: isDeleted,
            version: RecordVersion(modifiedAt: Date(timeIntervalSinceReferenceDate: modifiedAt), node: PeerID(node)))
        return StoredRecord(record: record, position: ChangePosition(try Self.position(position)))
    }

    /// A stored position as a ``ChangePosition`` value.
    private static func position(_ stored: Int64) throws -> UInt64 {
        guard let position = UInt64(exactly: stored) else {
            throw StoreError(.corrupt, "a stored change position is negative: \(stored)")
        }
        return position
    }
}
