#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PostgresNIO
public import SyncCore

extension PostgresStore: BrowsableStore {
    /// Every account that ever committed a write, sorted by name (as UTF-8 bytes), with its last position:
    /// one statement, which takes no lock.
    /// - Throws: ``SyncCore/StoreError`` when the database cannot be read.
    public func accountSummaries() async throws -> [AccountSummary] {
        try await withStoreErrors("listing the accounts") {
            try await queries.accountSummaries(client)
        }
    }

    /// The collections of `account` that hold at least one record (tombstones count), sorted by name (as
    /// UTF-8 bytes), counted: one statement, which takes no lock.
    /// - Throws: ``SyncCore/StoreError`` when the database cannot be read.
    public func collectionSummaries(of account: AccountID) async throws -> [CollectionSummary] {
        // PostgreSQL text cannot hold NUL, so no account of that name holds anything.
        guard !account.rawValue.utf8.contains(0) else { return [] }
        return try await withStoreErrors("listing the collections of \(account)") {
            try await queries.collectionSummaries(of: account, client)
        }
    }
}

extension StoreQueries {
    /// Every account with a committed transaction (a revision above 0: a transaction that took the
    /// account's lock and committed nothing leaves a row of revision 0), by name.
    func accountSummaries(_ client: PostgresClient) async throws -> [AccountSummary] {
        let rows = try await PreparedQueries.run(
            "SELECT name, last_position FROM \(unescaped: schema).account WHERE revision > 0 ORDER BY name",
            on: client, logger: logger)
        var summaries: [AccountSummary] = []
        for try await row in rows {
            let (name, lastPosition) = try row.decode((String, Int64).self)
            summaries.append(
                AccountSummary(account: AccountID(name), lastPosition: ChangePosition(try Self.browsedPosition(lastPosition))))
        }
        return summaries
    }

    /// The collections of `account` with at least one record, by name, counted: one pass over the
    /// account's entries of the primary key, which is in collection order.
    func collectionSummaries(of account: AccountID, _ client: PostgresClient) async throws -> [CollectionSummary] {
        let rows = try await PreparedQueries.run(
            """
            SELECT collection, count(*) FILTER (WHERE NOT is_deleted), count(*) FILTER (WHERE is_deleted),
                max(position), max(modified_at)
            FROM \(unescaped: schema).record
            WHERE account_id = (SELECT id FROM \(unescaped: schema).account WHERE name = \(account.rawValue))
            GROUP BY collection ORDER BY collection
            """, on: client, logger: logger)
        var summaries: [CollectionSummary] = []
        for try await row in rows {
            let (collection, live, deleted, position, modifiedAt) = try row.decode((String, Int64, Int64, Int64, Double).self)
            summaries.append(
                CollectionSummary(
                    collection: CollectionID(collection), liveRecords: Int(live), deletedRecords: Int(deleted),
                    latestPosition: ChangePosition(try Self.browsedPosition(position)),
                    latestModified: Date(timeIntervalSinceReferenceDate: modifiedAt)))
        }
        return summaries
    }

    /// A stored position as a ``SyncCore/ChangePosition`` raw value.
    private static func browsedPosition(_ stored: Int64) throws -> UInt64 {
        guard let position = UInt64(exactly: stored) else {
            throw StoreError(.corrupt, "a stored change position is negative: \(stored)")
        }
        return position
    }
}
