#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Records, reads and assertions shared by the store contract checks.
extension StoreContractSuite {
    /// A fresh store from the factory.
    func freshStore() async throws -> any SyncStore {
        try await makeStore()
    }

    /// Runs the body of `check` on a fresh store, handing it the name of the check's rule, and turns any
    /// error that is not already a ``VerificationError`` into one that names the check.
    func checking(_ check: Check, _ body: (any SyncStore, _ rule: String) async throws -> Void) async throws {
        let rule = check.rule
        let store: any SyncStore
        do { store = try await freshStore() } catch {
            throw failure(rule, "the store factory failed: \(error)")
        }
        do {
            try await body(store, rule)
        } catch let error as VerificationError {
            throw error
        } catch {
            throw failure(rule, "the store threw \(error)")
        }
    }

    /// Throws a ``VerificationError`` for `check` unless `condition` holds.
    func require(_ condition: Bool, _ check: String, _ message: @autoclosure () -> String) throws {
        guard condition else { throw VerificationError("store contract, \(check): \(message())") }
    }

    /// A failure of `check`.
    func failure(_ check: String, _ message: String) -> VerificationError {
        VerificationError("store contract, \(check): \(message)")
    }

    /// A record with whole-second version times, which every store keeps exactly.
    static func record(
        _ collection: CollectionID, _ id: RecordID, _ fields: [String: SyncValue] = [:], deleted: Bool = false,
        second: Int = 0
    ) -> SyncRecord {
        SyncRecord(
            collection: collection, id: id, fields: fields, isDeleted: deleted,
            version: RecordVersion(
                modifiedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(second)), node: "contract-suite"))
    }

    /// Commits `records` in one transaction.
    static func put(_ records: [SyncRecord], in store: any SyncStore, for account: AccountID) async throws {
        try await store.transaction(for: account) { tx in
            for record in records { try await tx.put(record) }
        }
    }

    /// Commits `records` one transaction each.
    static func putEach(_ records: [SyncRecord], in store: any SyncStore, for account: AccountID) async throws {
        for record in records { try await put([record], in: store, for: account) }
    }

    /// Purges `key` in its own transaction.
    static func purge(_ key: RecordKey, in store: any SyncStore, for account: AccountID) async throws {
        try await store.transaction(for: account) { tx in try await tx.purge(key) }
    }

    /// The record at `key`, read in its own transaction.
    static func read(_ key: RecordKey, in store: any SyncStore, for account: AccountID) async throws -> StoredRecord? {
        try await store.transaction(for: account) { tx in try await tx.record(key) }
    }

    /// A metadata value, read in its own transaction.
    static func metadata(
        _ key: String, for peer: PeerID, in store: any SyncStore, account: AccountID
    ) async throws -> SyncValue? {
        try await store.transaction(for: account) { tx in try await tx.metadata(key, for: peer) }
    }

    /// Sets a metadata value in its own transaction.
    static func setMetadata(
        _ value: SyncValue?, _ key: String, for peer: PeerID, in store: any SyncStore, account: AccountID
    ) async throws {
        try await store.transaction(for: account) { tx in try await tx.setMetadata(value, key, for: peer) }
    }

    /// Every record of a collection, paged through `records(in:after:limit:)`.
    static func allRecords(
        in collection: CollectionID, of store: any SyncStore, for account: AccountID, pageSize: Int = 3
    ) async throws -> [StoredRecord] {
        try await store.transaction(for: account) { tx in
            var result: [StoredRecord] = []
            var after: RecordID?
            while true {
                let page = try await tx.records(in: collection, after: after, limit: pageSize)
                result += page
                guard page.count == pageSize, let last = page.last else { return result }
                after = last.record.id
            }
        }
    }

    /// Every change after `position`, paged with `limit`, checking on the way
    /// that the pages keep the rules of ``ChangeBatch``.
    func allChanges(
        _ check: String, of store: any SyncStore, for account: AccountID, after position: ChangePosition = .start,
        in collections: Set<CollectionID>? = nil, limit: Int = 1_000
    ) async throws -> [StoredRecord] {
        var result: [StoredRecord] = []
        var after = position
        // A correct store ends after at most one page per record plus one.
        let latest = try await store.latestPosition(for: account)
        let maxPages = Int(clamping: latest.rawValue) + 2
        for _ in 0..<maxPages {
            let batch = try await store.changes(for: account, after: after, in: collections, limit: limit)
            try require(
                batch.records.count <= limit, check,
                "changes(limit: \(limit)) returned \(batch.records.count) records")
            try require(
                !batch.hasMore || batch.records.count == limit, check,
                "a batch of \(batch.records.count) records with limit \(limit) says hasMore")
            var previous = after
            for stored in batch.records {
                try require(
                    stored.position > previous, check,
                    "change \(stored.record.key) at \(stored.position) does not come after \(previous)")
                if let collections {
                    try require(
                        collections.contains(stored.record.collection), check,
                        "changes(in: \(collections.sorted())) returned \(stored.record.key)")
                }
                previous = stored.position
            }
            let expectedLast = batch.records.last?.position ?? after
            try require(
                batch.lastPosition == expectedLast, check,
                "lastPosition is \(batch.lastPosition), expected \(expectedLast)")
            result += batch.records
            after = batch.lastPosition
            if !batch.hasMore { return result }
        }
        throw failure(check, "paging through changes did not end after \(maxPages) pages")
    }

    /// Checks that `changes` holds each record key at most once.
    func requireDistinctKeys(_ changes: [StoredRecord], _ check: String) throws {
        var seen = Set<RecordKey>()
        for stored in changes {
            try require(
                seen.insert(stored.record.key).inserted, check,
                "record \(stored.record.key) appears more than once in the changes")
        }
    }

    /// Checks that `body` fails with ``StoreError/Code/invalidArgument``.
    func requireInvalidArgument(
        _ check: String, _ call: String, _ body: () async throws -> Void
    ) async throws {
        do {
            try await body()
        } catch let error as StoreError {
            try require(
                error.code == .invalidArgument, check,
                "\(call) threw \(error), expected \(StoreError.Code.invalidArgument)")
            return
        } catch {
            throw failure(check, "\(call) threw \(error), expected StoreError \(StoreError.Code.invalidArgument)")
        }
        throw failure(check, "\(call) succeeded, expected StoreError \(StoreError.Code.invalidArgument)")
    }
}

/// The error the contract checks throw from a transaction body to test rollback.
struct ContractRollbackProbe: Error, Equatable {}
