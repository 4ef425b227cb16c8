import Foundation
import SyncCore
import Synchronization
import Testing

// The browsing checks of `BrowsableStore`, run on every store: `Tests/SyncSQLiteTests/StoreBrowsingTests.swift`
// (memory and SQLite) and `Tests/SyncPostgresTests/StoreBrowsingTests.swift` (PostgreSQL).

/// What every ``BrowsableStore`` answers, each check on a fresh, empty store.
public enum BrowsingChecks {
    /// The time of second 0 of the records' versions.
    public static let base = Date(timeIntervalSince1970: 1_700_000_000)

    /// A record with a whole-second version time.
    public static func record(
        _ collection: CollectionID, _ id: RecordID, second: Int, deleted: Bool = false, fields: [String: SyncValue] = [:]
    ) -> SyncRecord {
        SyncRecord(
            collection: collection, id: id, fields: deleted ? [:] : fields, isDeleted: deleted,
            version: RecordVersion(modifiedAt: base + Double(second), node: "browsing-tests"))
    }

    /// Commits `records` in one transaction of `account`.
    public static func commit(_ records: [SyncRecord], purging purged: [RecordKey] = [], to store: any SyncStore, for account: AccountID)
        async throws
    {
        try await store.transaction(for: account) { tx in
            for record in records { try await tx.put(record) }
            for key in purged { try await tx.purge(key) }
        }
    }

    /// The position of each record of `account`, from the change sequence.
    public static func positions(of account: AccountID, in store: any SyncStore) async throws -> [RecordKey: ChangePosition] {
        let changes = try await store.changes(for: account, after: .start, in: nil, limit: 100_000)
        return Dictionary(uniqueKeysWithValues: changes.records.map { ($0.record.key, $0.position) })
    }

    /// Two accounts with records in several collections, tombstones and a purge; an account that wrote only
    /// metadata; an account whose only record was purged.
    public static func summaries(_ store: any BrowsableStore) async throws {
        try await commit(
            [
                record("notes", "n1", second: 10, fields: ["text": "one"]), record("notes", "n2", second: 20),
                record("tasks", "t1", second: 5),
            ], to: store, for: "bea")
        try await commit(
            [
                record("contacts", "c1", second: 1), record("contacts", "c2", second: 2), record("contacts", "c3", second: 3),
                record("notes", "a1", second: 50),
            ], to: store, for: "ada")
        try await commit(
            [record("contacts", "c2", second: 100, deleted: true), record("notes", "a2", second: 40, deleted: true)],
            purging: [RecordKey(collection: "contacts", id: "c3")], to: store, for: "ada")
        try await commit(
            [record("tasks", "t1", second: 7, deleted: true), record("archive", "z1", second: 3, deleted: true)],
            to: store, for: "bea")
        try await store.transaction(for: "Cyd") { tx in try await tx.setMetadata("anchor-1", "anchor", for: "phone") }
        try await commit([record("notes", "d1", second: 1)], to: store, for: "dan")
        try await commit([], purging: [RecordKey(collection: "notes", id: "d1")], to: store, for: "dan")

        // Sorted by name as bytes: upper case before lower case.
        let accounts = try await store.accountSummaries()
        #expect(accounts.map(\.account) == ["Cyd", "ada", "bea", "dan"])
        let ada = try await positions(of: "ada", in: store)
        let bea = try await positions(of: "bea", in: store)
        for summary in accounts {
            #expect(summary.lastPosition == (try await store.latestPosition(for: summary.account)), "\(summary.account)")
        }
        #expect(accounts.first { $0.account == "Cyd" }?.lastPosition == .start)
        #expect(accounts.first { $0.account == "ada" }?.lastPosition == ada.values.max())
        #expect(accounts.first { $0.account == "bea" }?.lastPosition == bea.values.max())
        #expect((accounts.first { $0.account == "dan" }?.lastPosition ?? .start) > .start)

        let key = { (collection: CollectionID, id: RecordID) in RecordKey(collection: collection, id: id) }
        let (contacts, adaNotes) = (try #require(ada[key("contacts", "c2")]), try #require(ada[key("notes", "a2")]))
        #expect(
            try await store.collectionSummaries(of: "ada") == [
                CollectionSummary(
                    collection: "contacts", liveRecords: 1, deletedRecords: 1, latestPosition: contacts,
                    latestModified: base + 100),
                CollectionSummary(
                    collection: "notes", liveRecords: 1, deletedRecords: 1, latestPosition: adaNotes, latestModified: base + 50),
            ])
        let (archive, beaNotes, tasks) = (
            try #require(bea[key("archive", "z1")]), try #require(bea[key("notes", "n2")]), try #require(bea[key("tasks", "t1")])
        )
        #expect(beaNotes > (try #require(bea[key("notes", "n1")])))
        #expect(
            try await store.collectionSummaries(of: "bea") == [
                CollectionSummary(
                    collection: "archive", liveRecords: 0, deletedRecords: 1, latestPosition: archive, latestModified: base + 3),
                CollectionSummary(
                    collection: "notes", liveRecords: 2, deletedRecords: 0, latestPosition: beaNotes, latestModified: base + 20),
                CollectionSummary(
                    collection: "tasks", liveRecords: 0, deletedRecords: 1, latestPosition: tasks, latestModified: base + 7),
            ])
        // An account that wrote only metadata, one whose records were all purged, and one never written.
        #expect(try await store.collectionSummaries(of: "Cyd") == [])
        #expect(try await store.collectionSummaries(of: "dan") == [])
        #expect(try await store.collectionSummaries(of: "nobody") == [])
    }

    /// A store nothing was written to lists no account and no collection.
    public static func emptyStore(_ store: any BrowsableStore) async throws {
        #expect(try await store.accountSummaries() == [])
        #expect(try await store.collectionSummaries(of: "ada") == [])
        #expect(try await store.recordPage(of: "ada", in: "notes", after: nil, limit: 10) == [])
        #expect(try await store.storedRecord(of: "ada", RecordKey(collection: "notes", id: "n1")) == nil)
    }

    /// 250 records, every tenth a tombstone, written in a scrambled order, paged by 100 in id order.
    public static func paging(_ store: any BrowsableStore) async throws {
        let ids = (0..<250).map { RecordID("r" + String(1_000 + $0).dropFirst()) }
        let isTombstone = { (index: Int) in index % 10 == 3 }
        let scrambled = (0..<250).map { ($0 * 97) % 250 }  // 97 and 250 have no common factor: every index once
        for start in stride(from: 0, to: 250, by: 50) {
            let records = scrambled[start..<start + 50].map { index in
                record("bulk", ids[index], second: index, deleted: isTombstone(index), fields: ["n": .integer(Int64(index))])
            }
            try await commit(records, to: store, for: "ada")
        }
        // Neighbours that must not show: another collection of the account, the same collection of another account.
        try await commit([record("bulk2", "r000", second: 0), record("bul", "r001", second: 0)], to: store, for: "ada")
        try await commit([record("bulk", "r0005", second: 0), record("bulk", "r100", second: 0)], to: store, for: "bea")

        var pages: [[StoredRecord]] = []
        var after: RecordID?
        while true {
            let page = try await store.recordPage(of: "ada", in: "bulk", after: after, limit: 100)
            if page.isEmpty || pages.count > 5 { break }
            pages.append(page)
            after = page.last?.record.id
        }
        #expect(pages.map(\.count) == [100, 100, 50])
        let all = pages.flatMap { $0 }
        #expect(all.map(\.record.id) == ids)
        #expect(all.map(\.record.isDeleted) == (0..<250).map(isTombstone))
        #expect(all.filter(\.record.isDeleted).count == 25)
        #expect(all.allSatisfy { $0.record.collection == "bulk" && $0.position > .start })
        #expect(all.first { $0.record.id == "r042" }?.record.fields == ["n": .integer(42)])
        #expect(Set(all.map(\.position)).count == 250)

        #expect(try await store.recordPage(of: "ada", in: "bulk", after: "r249", limit: 100) == [])
        #expect(try await store.recordPage(of: "ada", in: "bulk", after: "r3", limit: 100) == [])
        let middle = try await store.recordPage(of: "ada", in: "bulk", after: "r0995", limit: 3)
        #expect(middle.map(\.record.id) == ["r100", "r101", "r102"])
        #expect(try await store.recordPage(of: "ada", in: "bulk", after: nil, limit: 1_000) == all)
        #expect(try await store.recordPage(of: "ada", in: "nothing", after: nil, limit: 100) == [])
        #expect(try await store.recordPage(of: "nobody", in: "bulk", after: nil, limit: 100) == [])
        let refusal = await #expect(throws: StoreError.self) {
            try await store.recordPage(of: "ada", in: "bulk", after: nil, limit: 0)
        }
        #expect(refusal?.code == .invalidArgument)

        let summaries = try await store.collectionSummaries(of: "ada")
        #expect(summaries.map(\.collection) == ["bul", "bulk", "bulk2"])
        #expect(summaries.first { $0.collection == "bulk" }.map { [$0.liveRecords, $0.deletedRecords] } == [225, 25])
        #expect(summaries.first { $0.collection == "bulk" }?.latestModified == base + 249)
    }

    /// A live record and a tombstone are found; a record never written, purged, or of another account is not.
    public static func singleRecords(_ store: any BrowsableStore) async throws {
        let live = record("notes", "k1", second: 1, fields: ["text": "hello", "count": .integer(3)])
        try await commit(
            [live, record("notes", "k2", second: 2, deleted: true), record("notes", "k4", second: 4)], to: store, for: "ada")
        try await commit([record("notes", "k3", second: 3)], to: store, for: "bea")
        try await commit([], purging: [RecordKey(collection: "notes", id: "k4")], to: store, for: "ada")
        let positions = try await positions(of: "ada", in: store)

        let found = try #require(try await store.storedRecord(of: "ada", live.key))
        #expect(found.record == live)
        #expect(found.position == positions[live.key])
        let tombstone = try #require(try await store.storedRecord(of: "ada", RecordKey(collection: "notes", id: "k2")))
        #expect(tombstone.record.isDeleted)
        #expect(tombstone.record.version.modifiedAt == base + 2)
        #expect(try await store.storedRecord(of: "ada", RecordKey(collection: "notes", id: "k3")) == nil)
        #expect(try await store.storedRecord(of: "bea", RecordKey(collection: "notes", id: "k3"))?.record.id == "k3")
        #expect(try await store.storedRecord(of: "ada", RecordKey(collection: "notes", id: "k4")) == nil)
        #expect(try await store.storedRecord(of: "ada", RecordKey(collection: "notes", id: "k9")) == nil)
        #expect(try await store.storedRecord(of: "ada", RecordKey(collection: "tasks", id: "k1")) == nil)
        #expect(try await store.storedRecord(of: "nobody", live.key) == nil)
    }

    /// While a transaction of the account is open with a write, the summaries (and, where the store's
    /// committed reads skip transactions, a page) answer without waiting for it, and do not see its write;
    /// after it commits they do.
    public static func readsBesideOpenTransaction(_ store: any BrowsableStore, pageReadsSkipTransactions: Bool) async throws {
        try await commit([record("notes", "n1", second: 1)], to: store, for: "ada")
        let (opened, openedContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        let writer = Task {
            try await store.transaction(for: "ada") { tx in
                try await tx.put(record("notes", "n2", second: 2))
                openedContinuation.yield()
                for await _ in release { break }
            }
        }
        for await _ in opened { break }

        let done = DoneFlag()
        let reads = Task { () async throws -> ([AccountSummary], [CollectionSummary], [StoredRecord]?) in
            defer { done.set() }
            let accounts = try await store.accountSummaries()
            let collections = try await store.collectionSummaries(of: "ada")
            let page = pageReadsSkipTransactions ? try await store.recordPage(of: "ada", in: "notes", after: nil, limit: 10) : nil
            return (accounts, collections, page)
        }
        var waited = 0
        while !done.isSet, waited < 1_000 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        let answeredWhileOpen = done.isSet
        releaseContinuation.yield()
        releaseContinuation.finish()
        try await writer.value
        #expect(answeredWhileOpen, "the reads waited for the open transaction")

        let (accounts, during, page) = try await reads.value
        #expect(accounts.map(\.account) == ["ada"])
        #expect(during.map(\.liveRecords) == [1])
        if pageReadsSkipTransactions { #expect(page?.map(\.record.id) == ["n1"]) }
        #expect(try await store.collectionSummaries(of: "ada").map(\.liveRecords) == [2])
        #expect(try await store.recordPage(of: "ada", in: "notes", after: nil, limit: 10).map(\.record.id) == ["n1", "n2"])
    }
}

/// A flag one task sets and another polls.
final class DoneFlag: Sendable {
    private let value = Mutex(false)
    /// Whether ``set()`` ran.
    var isSet: Bool { value.withLock { $0 } }
    /// Sets the flag.
    func set() { value.withLock { $0 = true } }
}
