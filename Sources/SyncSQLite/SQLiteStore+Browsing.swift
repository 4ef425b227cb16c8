#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GRDB
public import SyncCore

extension SQLiteStore: BrowsableStore {
    /// Every account that ever committed a write, sorted by name (as UTF-8 bytes), with its last position: one
    /// query on a reader connection, which never waits for the writer.
    /// - Throws: ``SyncCore/StoreError`` when the database cannot be read.
    public func accountSummaries() async throws -> [AccountSummary] {
        try withStoreErrors("listing the accounts") {
            try readOnCallingThread(database) { db in try BrowsingQueries.accountSummaries(db) }
        }
    }

    /// The collections of `account` that hold at least one record (tombstones count), sorted by name (as
    /// UTF-8 bytes), counted: one query on a reader connection, which never waits for the writer.
    /// - Throws: ``SyncCore/StoreError`` when the database cannot be read.
    public func collectionSummaries(of account: AccountID) async throws -> [CollectionSummary] {
        try withStoreErrors("listing the collections of \(account)") {
            try readOnCallingThread(database) { db in try BrowsingQueries.collectionSummaries(of: account, db) }
        }
    }
}

/// The SQL of ``SQLiteStore``'s ``SyncCore/BrowsableStore`` conformance.
enum BrowsingQueries {
    /// Every account with a committed transaction (a revision above 0), by name.
    static func accountSummaries(_ db: Database) throws -> [AccountSummary] {
        let statement = try db.cachedStatement(
            sql: "SELECT name, last_position FROM account WHERE revision > 0 ORDER BY name")
        return try Row.fetchAll(statement).map { row in
            try AccountSummary(
                account: AccountID(row.decode(String.self, atIndex: 0)),
                lastPosition: ChangePosition(position(row.decode(Int64.self, atIndex: 1))))
        }
    }

    /// The collections of `account` with at least one record, by name, counted: one pass over the account's
    /// entries of the `record_key` index, which is in collection order.
    static func collectionSummaries(of account: AccountID, _ db: Database) throws -> [CollectionSummary] {
        let statement = try db.cachedStatement(
            sql: """
                SELECT collection, COUNT(*) - SUM(is_deleted), SUM(is_deleted), MAX(position), MAX(modified_at)
                FROM record
                WHERE account_id = (SELECT id FROM account WHERE name = ?)
                GROUP BY collection ORDER BY collection
                """)
        return try Row.fetchAll(statement, arguments: [account.rawValue]).map { row in
            try CollectionSummary(
                collection: CollectionID(row.decode(String.self, atIndex: 0)),
                liveRecords: row.decode(Int.self, atIndex: 1),
                deletedRecords: row.decode(Int.self, atIndex: 2),
                latestPosition: ChangePosition(position(row.decode(Int64.self, atIndex: 3))),
                latestModified: Date(timeIntervalSinceReferenceDate: row.decode(Double.self, atIndex: 4)))
        }
    }

    /// A stored position as a ``SyncCore/ChangePosition`` raw value.
    private static func position(_ stored: Int64) throws -> UInt64 {
        guard let position = UInt64(exactly: stored) else {
            throw StoreError(.corrupt, "a stored change position is negative: \(stored)")
        }
        return position
    }
}
