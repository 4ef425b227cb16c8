#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
        try await latestPositionAndRevision(of: account, client).0
    }

    /// The committed records of `account` written after `position`, in order of position, their fields in the stored form.
    func encodedChanges(
        of account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>?, limit: Int,
        _ client: PostgresClient
    ) async throws -> EncodedChangeBatch {
        if let collections, collections.isEmpty {
            return EncodedChangeBatch(records: [], lastPosition: position, hasMore: false)
        }
        let after = Int64(clamping: position.rawValue)
        // One more than asked tells whether more follow.
        let fetchCount = Int64(clamping: limit) == .max ? Int64.max : Int64(limit) + 1
        // The page comes back as one row, its records packed into one bytea (``packedRecord``): the
        // driver decodes one row instead of one per record, which cost more than the query itself.
        let rows: AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow>
        if let collections {
            let names = collections.map(\.rawValue).sorted()
            rows = try await PreparedQueries.run(
                """
                SELECT count(*), string_agg(\(unescaped: Self.packedRecord), ''::bytea ORDER BY position) FROM (
                    SELECT \(unescaped: Self.recordColumns) FROM \(unescaped: schema).record
                    WHERE account_id = (SELECT id FROM \(unescaped: schema).account WHERE name = \(account.rawValue))
                        AND position > \(after) AND collection = ANY(\(names))
                    ORDER BY position LIMIT \(fetchCount)) AS page
                """, on: client, logger: logger)
        } else {
            rows = try await PreparedQueries.run(
                """
                SELECT count(*), string_agg(\(unescaped: Self.packedRecord), ''::bytea ORDER BY position) FROM (
                    SELECT \(unescaped: Self.recordColumns) FROM \(unescaped: schema).record
                    WHERE account_id = (SELECT id FROM \(unescaped: schema).account WHERE name = \(account.rawValue))
                        AND position > \(after)
                    ORDER BY position LIMIT \(fetchCount)) AS page
                """, on: client, logger: logger)
        }
        var stored: [EncodedStoredRecord] = []
        for try await row in rows {
            let (count, packed) = try row.decode((Int64, ByteBuffer?).self)
            stored.reserveCapacity(Int(clamping: count))
            if var packed { stored += try Self.unpackRecords(&packed) }
            guard stored.count == count else {
                throw StoreError(.corrupt, "a page of \(count) records unpacked into \(stored.count)")
            }
        }
        let hasMore = stored.count > limit
        let records = hasMore ? Array(stored.prefix(limit)) : stored
        return EncodedChangeBatch(records: records, lastPosition: records.last?.position ?? position, hasMore: hasMore)
    }

    // MARK: Reading inside transactions (with the account's revision)

    /// The records of account `a` at the keys of the query's `wanted` rows, as `r`.
    ///
    /// Rows of an account are read in subqueries of the account's row (`LATERAL`) that PostgreSQL cannot
    /// fold into a join (`LIMIT`, `OFFSET 0`), here and for the metadata below: each is then a lookup of
    /// the account's id and key in the primary key. As joins, the generic plans that prepared statements
    /// settle on, made while the tables were nearly empty, scanned the records of the account, or the
    /// metadata index of every account, at every sync, for as long as the connection kept the statement.
    private var wantedRecordsJoin: String {
        """
        LEFT JOIN LATERAL (
            SELECT found.* FROM wanted CROSS JOIN LATERAL (
                SELECT \(Self.recordColumns) FROM \(schema).record
                WHERE account_id = a.id AND collection = wanted.collection AND record_id = wanted.record_id
                LIMIT 1
            ) AS found
        ) AS r ON true
        """
    }

    /// The committed records at `keys`, by key, their fields left in the stored form, and the account's
    /// revision: one query.
    func records(
        at keys: [RecordKey], of account: AccountID, _ client: PostgresClient
    ) async throws -> ([RecordKey: EncodedStoredRecord], revision: Int64) {
        let collections = keys.map(\.collection.rawValue)
        let ids = keys.map(\.id.rawValue)
        let rows = try await PreparedQueries.run(
            """
            WITH wanted(collection, record_id) AS (SELECT * FROM unnest(\(collections)::text[], \(ids)::text[]))
            SELECT a.revision, \(unescaped: Self.joinedRecordColumns)
            FROM (SELECT 1) AS one
            LEFT JOIN \(unescaped: schema).account a ON a.name = \(account.rawValue)
            \(unescaped: wantedRecordsJoin)
            """, on: client, logger: logger)
        let (records, revision) = try await Self.encodedRecordsAndRevision(rows)
        return (Dictionary(records.map { ($0.key, $0) }, uniquingKeysWith: { _, later in later }), revision)
    }

    /// The committed records at `keys`, by key, the metadata value `key` of `peer`, the account's latest
    /// position and its revision: one query (each row carries the metadata value and the account's
    /// columns beside a record).
    func records(
        at keys: [RecordKey], metadata key: String, for peer: PeerID, of account: AccountID, _ client: PostgresClient
    ) async throws -> (([RecordKey: StoredRecord], SyncValue?, latest: ChangePosition), revision: Int64) {
        let collections = keys.map(\.collection.rawValue)
        let ids = keys.map(\.id.rawValue)
        let rows = try await PreparedQueries.run(
            """
            WITH wanted(collection, record_id) AS (SELECT * FROM unnest(\(collections)::text[], \(ids)::text[]))
            SELECT a.revision, a.last_position, m.value, \(unescaped: Self.joinedRecordColumns)
            FROM (SELECT 1) AS one
            LEFT JOIN \(unescaped: schema).account a ON a.name = \(account.rawValue)
            LEFT JOIN LATERAL (
                SELECT value FROM \(unescaped: schema).peer_metadata
                WHERE account_id = a.id AND peer = \(peer.rawValue) AND key = \(key) LIMIT 1
            ) AS m ON true
            \(unescaped: wantedRecordsJoin)
            """, on: client, logger: logger)
        var found: [RecordKey: StoredRecord] = [:]
        var value: SyncValue?
        var revision: Int64 = 0
        var latest: Int64 = 0
        for try await row in rows {
            let (rowRevision, lastPosition, blob, collection, id, position, isDeleted, modifiedAt, node, fields) =
                try row.decode((Int64?, Int64?, Data?, String?, String?, Int64?, Bool?, Double?, String?, Data?).self)
            revision = rowRevision ?? 0
            latest = lastPosition ?? 0
            value = try blob.map { blob throws(StoreError) in try StoredValueFormat.decode(blob) }
            if let record = try Self.storedRecord((collection, id, position, isDeleted, modifiedAt, node, fields)) {
                found[record.record.key] = record
            }
        }
        return ((found, value, try ChangePosition(Self.position(latest))), revision)
    }

    /// The account's latest position and its revision: one query.
    func latestPositionAndRevision(of account: AccountID, _ client: PostgresClient) async throws -> (ChangePosition, revision: Int64) {
        let rows = try await PreparedQueries.run(
            "SELECT last_position, revision FROM \(unescaped: schema).account WHERE name = \(account.rawValue)",
            on: client, logger: logger)
        var (latest, revision): (Int64, Int64) = (0, 0)
        for try await row in rows { (latest, revision) = try row.decode((Int64, Int64).self) }
        return (try ChangePosition(Self.position(latest)), revision)
    }

    /// Up to `limit` committed records of `collection` with ids after `id`, in id order, their fields left
    /// in the stored form, and the account's revision.
    func records(
        in collection: CollectionID, after id: RecordID?, limit: Int, of account: AccountID, _ client: PostgresClient
    ) async throws -> ([EncodedStoredRecord], revision: Int64) {
        let fetchLimit = Int64(clamping: limit)
        let rows = try await PreparedQueries.run(
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
            """, on: client, logger: logger)
        return try await Self.encodedRecordsAndRevision(rows)
    }

    /// The committed metadata value of `account` for `peer` under `key`, and the account's revision.
    func metadata(
        _ key: String, for peer: PeerID, of account: AccountID, _ client: PostgresClient
    ) async throws -> (SyncValue?, revision: Int64) {
        let rows = try await PreparedQueries.run(
            """
            SELECT a.revision, m.value
            FROM (SELECT 1) AS one
            LEFT JOIN \(unescaped: schema).account a ON a.name = \(account.rawValue)
            LEFT JOIN LATERAL (
                SELECT value FROM \(unescaped: schema).peer_metadata
                WHERE account_id = a.id AND peer = \(peer.rawValue) AND key = \(key) LIMIT 1
            ) AS m ON true
            """, on: client, logger: logger)
        var value: SyncValue?
        var revision: Int64 = 0
        for try await row in rows {
            let (rowRevision, blob) = try row.decode((Int64?, Data?).self)
            revision = rowRevision ?? 0
            value = try blob.map { blob throws(StoreError) in try StoredValueFormat.decode(blob) }
        }
        return (value, revision)
    }

    /// The committed metadata values of `account` for `peer` under `keys`, by key, and the account's revision.
    func metadata(
        at keys: [String], for peer: PeerID, of account: AccountID, _ client: PostgresClient
    ) async throws -> ([String: SyncValue], revision: Int64) {
        let rows = try await PreparedQueries.run(
            """
            SELECT a.revision, m.key, m.value
            FROM (SELECT 1) AS one
            LEFT JOIN \(unescaped: schema).account a ON a.name = \(account.rawValue)
            LEFT JOIN LATERAL (
                SELECT key, value FROM \(unescaped: schema).peer_metadata
                WHERE account_id = a.id AND peer = \(peer.rawValue) AND key = ANY(\(keys)::text[]) OFFSET 0
            ) AS m ON true
            """, on: client, logger: logger)
        var found: [String: SyncValue] = [:]
        var revision: Int64 = 0
        for try await row in rows {
            let (rowRevision, key, blob) = try row.decode((Int64?, String?, Data?).self)
            revision = rowRevision ?? 0
            if let key, let blob { found[key] = try StoredValueFormat.decode(blob) }
        }
        return (found, revision)
    }

    // MARK: Writing

    /// Takes the row lock of `account`'s row inside the caller's open
    /// transaction on `connection` (making the row if the account has none), so
    /// no other transaction of the account commits until this one ends.
    func lockAccount(_ account: AccountID, _ connection: PostgresConnection) async throws {
        for try await _ in try await PreparedQueries.run(
            """
            INSERT INTO \(unescaped: schema).account AS a (name) VALUES (\(account.rawValue))
            ON CONFLICT (name) DO UPDATE SET revision = a.revision
            """, on: connection, logger: logger) {}
    }

    /// Applies `writes` of `account` in one statement on `connection`: locks
    /// the account's row, hands out positions, writes records and metadata,
    /// and queues the change notification. One statement is one transaction
    /// of its own, or a part of the caller's open one.
    ///
    /// The statement's first part inserts or updates the account's row, which
    /// takes its row lock until the transaction ends: another transaction of
    /// the same account waits there, and then reads the counter this one left.
    /// With an expected revision, the update happens only if the row still has
    /// it; otherwise the row is left alone, and so is everything else, since
    /// every other part writes for the account row the first part returns.
    /// - Parameters:
    ///   - expectedRevision: the revision the transaction's reads saw, or `nil` when it read nothing.
    ///   - channel: the channel to notify when records were written.
    /// - Returns: The positions the commit handed out.
    /// - Throws: ``RevisionConflict`` when another process committed to the
    ///   account since the reads (nothing was written), or what the database throws.
    @discardableResult
    func commit(
        _ writes: PendingWrites, of account: AccountID, expectedRevision: Int64?, notifying channel: String,
        _ connection: PostgresConnection
    ) async throws -> CommittedPositions {
        var puts = RecordColumnArrays()
        var purged: (collections: [String], ids: [String]) = ([], [])
        for (key, write) in writes.records {
            switch write {
            case .put(let encoded): puts.append(key, encoded)
            case .purge:
                purged.collections.append(key.collection.rawValue)
                purged.ids.append(key.id.rawValue)
            }
        }
        var metadata: (peers: [String], keys: [String], values: [ByteBuffer]) = ([], [], [])
        var removedMetadata: (peers: [String], keys: [String]) = ([], [])
        for (peer, key, write) in writes.metadata {
            if let blob = write.blob {
                metadata.peers.append(peer.rawValue)
                metadata.keys.append(key)
                metadata.values.append(ByteBuffer(bytes: blob))
            } else {
                removedMetadata.peers.append(peer.rawValue)
                removedMetadata.keys.append(key)
            }
        }
        let putCount = Int64(puts.ids.count)
        // Only the parts this commit needs: PostgreSQL plans the statement each time, and a part with
        // nothing to do would still be planned (and a delete of nothing may still scan the account's rows).
        var statement = CommitStatement()
        let (name, count) = (statement.bind(account.rawValue), statement.bind(putCount))
        // The account's row is updated only while it has the revision the reads saw; a new account's
        // row is inserted whatever that revision, since its reads can only have seen 0.
        let revisionCheck = expectedRevision.map { " WHERE a.revision = \(statement.bind($0))" } ?? ""
        statement.part(
            "acct",
            """
            INSERT INTO \(schema).account AS a (name, revision, last_position) VALUES (\(name), 1, \(count))
            ON CONFLICT (name) DO UPDATE SET revision = a.revision + 1, last_position = a.last_position + \(count)\(revisionCheck)
            RETURNING a.id, a.last_position - \(count) AS first_before
            """)
        if !puts.ids.isEmpty {
            // Each put takes the next position, in the order written: the account's last position
            // before this commit plus the put's place in the arrays.
            statement.part(
                "put",
                """
                INSERT INTO \(schema).record AS r
                    (account_id, collection, record_id, position, is_deleted, modified_at, node, fields)
                SELECT acct.id, u.collection, u.record_id, acct.first_before + u.place, u.is_deleted, u.modified_at,
                    u.node, u.fields
                FROM acct, unnest(
                    \(statement.bind(puts.collections))::text[], \(statement.bind(puts.ids))::text[],
                    \(statement.bind(puts.isDeleted))::boolean[], \(statement.bind(puts.modifiedAt))::double precision[],
                    \(statement.bind(puts.nodes))::text[], \(statement.bind(puts.fields))::bytea[]
                ) WITH ORDINALITY AS u(collection, record_id, is_deleted, modified_at, node, fields, place)
                ON CONFLICT (account_id, collection, record_id) DO UPDATE SET
                    position = excluded.position, is_deleted = excluded.is_deleted,
                    modified_at = excluded.modified_at, node = excluded.node, fields = excluded.fields
                RETURNING 1
                """)
            statement.part(
                "notice",
                "SELECT pg_notify(\(statement.bind(channel)), \(statement.bind(Self.notificationPayload(for: account, writes)))) FROM acct")
        }
        statement.deletePart("purge", from: "\(schema).record", where: ("collection", "record_id"), in: purged)
        if !metadata.keys.isEmpty {
            statement.part(
                "meta",
                """
                INSERT INTO \(schema).peer_metadata (account_id, peer, key, value)
                SELECT acct.id, u.peer, u.key, u.value
                FROM acct, unnest(
                    \(statement.bind(metadata.peers))::text[], \(statement.bind(metadata.keys))::text[],
                    \(statement.bind(metadata.values))::bytea[]) AS u(peer, key, value)
                ON CONFLICT (account_id, peer, key) DO UPDATE SET value = excluded.value
                RETURNING 1
                """)
        }
        statement.deletePart("unmeta", from: "\(schema).peer_metadata", where: ("peer", "key"), in: removedMetadata)
        if !writes.removedMetadataPrefixes.isEmpty {
            // The parts of one statement run on one snapshot in no set order, so the rows this commit
            // writes (written after the removal in the transaction) are left to the upsert.
            let (peers, prefixes) = (writes.removedMetadataPrefixes.map(\.peer.rawValue), writes.removedMetadataPrefixes.map(\.prefix))
            let written = metadata.keys.isEmpty ? "" : """

                    AND (t.peer, t.key) NOT IN (
                        SELECT * FROM unnest(\(statement.bind(metadata.peers))::text[], \(statement.bind(metadata.keys))::text[]))
                """
            statement.part(
                "unprefix",
                """
                DELETE FROM \(schema).peer_metadata t
                USING acct, unnest(\(statement.bind(peers))::text[], \(statement.bind(prefixes))::text[]) AS p(peer, prefix)
                WHERE t.account_id = acct.id AND t.peer = p.peer AND t.key >= p.prefix AND starts_with(t.key, p.prefix)\(written)
                RETURNING 1
                """)
        }
        let rows = try await PreparedQueries.run(statement.query, on: connection, logger: logger)
        var before: Int64?
        for try await row in rows { before = try row.makeRandomAccess()[0].decode(Int64.self) }
        // No row: the account's row had moved past the revision read, and nothing was written.
        guard let before else { throw RevisionConflict() }
        return try CommittedPositions(
            before: ChangePosition(Self.position(before)), latest: ChangePosition(Self.position(before + putCount)))
    }

    /// A commit's statement: data-modifying `WITH` parts that each write for
    /// the account row of the first (`acct`), and binds numbered as they are made.
    private struct CommitStatement {
        private var parts: [String] = []
        private var names: [String] = []
        private var binds = PostgresBindings()

        /// Adds `value` to the binds; the placeholder to write in the SQL.
        mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }

        /// Adds the part `name`, its SQL.
        mutating func part(_ name: String, _ sql: String) {
            names.append(name)
            parts.append("\(name) AS (\n\(sql)\n)")
        }

        /// Adds the part `name` deleting the account's rows of `table` whose two `columns` hold one of
        /// the pairs in `values`; nothing when there are none.
        mutating func deletePart(
            _ name: String, from table: String, where columns: (String, String), in values: ([String], [String])
        ) {
            guard !values.0.isEmpty else { return }
            part(
                name,
                """
                DELETE FROM \(table) t USING acct
                WHERE t.account_id = acct.id AND (t.\(columns.0), t.\(columns.1)) IN (
                    SELECT * FROM unnest(\(bind(values.0))::text[], \(bind(values.1))::text[]))
                RETURNING 1
                """)
        }

        /// The statement: every part, then one row per account row written (the account's last position
        /// before the commit first), with a count of each later part's rows so that PostgreSQL runs the
        /// ones that only `SELECT`.
        var query: PostgresQuery {
            let counts = names.dropFirst().map { "(SELECT count(*) FROM \($0))" }
            let select = "SELECT " + (["acct.first_before"] + counts).joined(separator: ", ") + " FROM acct"
            return PostgresQuery(unsafeSQL: "WITH " + parts.joined(separator: ",\n") + "\n" + select, binds: binds)
        }
    }

    /// The columns of records to write, one array per column, for an upsert of `unnest`ed arrays.
    private struct RecordColumnArrays {
        var collections: [String] = []
        var ids: [String] = []
        var isDeleted: [Bool] = []
        var modifiedAt: [Double] = []
        var nodes: [String] = []
        var fields: [ByteBuffer] = []

        mutating func append(_ key: RecordKey, _ record: EncodedRecord) {
            collections.append(key.collection.rawValue)
            ids.append(key.id.rawValue)
            isDeleted.append(record.isDeleted)
            modifiedAt.append(record.version.modifiedAt.timeIntervalSinceReferenceDate)
            nodes.append(record.version.node.rawValue)
            fields.append(ByteBuffer(bytes: record.fields))
        }
    }

    // MARK: Rows

    /// A record of a page packed into one bytea: its position (8 bytes), whether it is deleted (1),
    /// its modification time (8, a double), and its collection, id, node and fields, each after its
    /// length (4 bytes); numbers big-endian.
    private static let packedRecord = """
        int8send(position) || CASE WHEN is_deleted THEN '\\x01'::bytea ELSE '\\x00'::bytea END || float8send(modified_at)
        || int4send(octet_length(convert_to(collection, 'UTF8'))) || convert_to(collection, 'UTF8')
        || int4send(octet_length(convert_to(record_id, 'UTF8'))) || convert_to(record_id, 'UTF8')
        || int4send(octet_length(convert_to(node, 'UTF8'))) || convert_to(node, 'UTF8')
        || int4send(octet_length(fields)) || fields
        """

    /// The records packed in `packed` (``packedRecord`` one after another).
    /// - Throws: ``StoreError/Code/corrupt`` when the bytes end early or a text is not UTF-8.
    private static func unpackRecords(_ packed: inout ByteBuffer) throws -> [EncodedStoredRecord] {
        func corrupt() -> StoreError { StoreError(.corrupt, "a packed page of records ends early or holds text that is not UTF-8") }
        func text() throws -> String {
            guard let length = packed.readInteger(as: Int32.self), length >= 0,
                let bytes = packed.readSlice(length: Int(length)),
                let text = bytes.readableBytesView.withContiguousStorageIfAvailable({ UTF8Validation.string($0) }) ?? nil
            else { throw corrupt() }
            return text
        }
        var records: [EncodedStoredRecord] = []
        while packed.readableBytes > 0 {
            guard let position = packed.readInteger(as: Int64.self), let isDeleted = packed.readInteger(as: UInt8.self),
                let modifiedAt = packed.readInteger(as: UInt64.self)
            else { throw corrupt() }
            let (collection, id, node) = (try text(), try text(), try text())
            guard let length = packed.readInteger(as: Int32.self), length >= 0, let fields = packed.readBytes(length: Int(length)) else {
                throw corrupt()
            }
            records.append(
                EncodedStoredRecord(
                    key: RecordKey(collection: CollectionID(collection), id: RecordID(id)), isDeleted: isDeleted != 0,
                    version: RecordVersion(
                        modifiedAt: Date(timeIntervalSinceReferenceDate: Double(bitPattern: modifiedAt)), node: PeerID(node)),
                    position: ChangePosition(try Self.position(position)), fields: Data(fields)))
        }
        return records
    }

    /// The records of rows that hold the account's revision and then ``joinedRecordColumns`` (no record when
    /// the columns are null), in the rows' order, and the account's revision (0 when there is no account).
    private static func encodedRecordsAndRevision(
        _ rows: some AsyncSequence<PostgresRow, any Error>
    ) async throws -> ([EncodedStoredRecord], revision: Int64) {
        var found: [EncodedStoredRecord] = []
        var revision: Int64 = 0
        for try await row in rows {
            let (rowRevision, collection, id, position, isDeleted, modifiedAt, node, fields) = try row.decode(
                (Int64?, String?, String?, Int64?, Bool?, Double?, String?, Data?).self)
            revision = rowRevision ?? 0
            if let record = try Self.encodedStoredRecord((collection, id, position, isDeleted, modifiedAt, node, fields)) {
                found.append(record)
            }
        }
        return (found, revision)
    }

    /// The record in a row of ``recordColumns``, or `nil` when a join found none.
    private static func storedRecord(_ columns: RecordColumns) throws -> StoredRecord? {
        try encodedStoredRecord(columns)?.decoded()
    }

    /// The record of a row of ``recordColumns``, its fields left in the stored form; `nil` when a join found none.
    private static func encodedStoredRecord(_ columns: RecordColumns) throws -> EncodedStoredRecord? {
        guard let collection = columns.0 else { return nil }
        guard let id = columns.1, let position = columns.2, let isDeleted = columns.3, let modifiedAt = columns.4,
            let node = columns.5, let blob = columns.6
        else {
            throw StoreError(.corrupt, "a stored record of collection \(collection) has empty columns")
        }
        return EncodedStoredRecord(
            key: RecordKey(collection: CollectionID(collection), id: RecordID(id)),
            isDeleted: isDeleted,
            version: RecordVersion(modifiedAt: Date(timeIntervalSinceReferenceDate: modifiedAt), node: PeerID(node)),
            position: ChangePosition(try Self.position(position)),
            fields: blob)
    }

    /// A stored position as a ``ChangePosition`` value.
    private static func position(_ stored: Int64) throws -> UInt64 {
        guard let position = UInt64(exactly: stored) else {
            throw StoreError(.corrupt, "a stored change position is negative: \(stored)")
        }
        return position
    }
}
