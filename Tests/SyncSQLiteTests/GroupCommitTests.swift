import Foundation
import GRDB
import SyncCore
import Synchronization
import Testing

@testable import SyncSQLite

/// ``GroupCommit`` through ``SQLiteStore``: concurrent transactions of many
/// accounts share SQLite transactions, and each still commits whole, in its
/// account's order, or fails alone.
@Suite("SQLiteStore: commits of concurrent transactions written together")
struct GroupCommitTests {
    @Test("64 accounts committing at once share transactions, and every account gets every write at consecutive positions")
    func concurrentCommitsShareTransactions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.file("group.sqlite"))
        let accounts = (0..<64).map { AccountID("device-\($0)") }
        let rounds = 10
        try await withThrowingTaskGroup(of: Void.self) { group in
            for account in accounts {
                group.addTask {
                    for round in 0..<rounds {
                        try await store.transaction(for: account) { tx in
                            try await tx.put(note(RecordID("n\(round)"), ["round": .integer(Int64(round))]))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        for account in accounts {
            let changes = try await allChanges(of: store, for: account)
            #expect(changes.map(\.position.rawValue) == Array(1...UInt64(rounds)), "\(account)")
            #expect(changes.map { $0.record.fields["round"] } == (0..<rounds).map { .integer(Int64($0)) })
        }
        let commits = accounts.count * rounds
        #expect(store.commits.transactionsWritten.load(ordering: .relaxed) < commits, "some commits were grouped")
        #expect(try await store.integrityProblems().isEmpty)
    }

    @Test("a commit past the size limit fails alone: the small commits beside it are written")
    func oneFailingCommitLeavesTheOthers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.file("small.sqlite"), configuration: .init(maximumSize: 512 * 1024))
        let big = SyncValue.string(String(repeating: "x", count: 4_000))
        let smallAccounts = (0..<16).map { AccountID("small-\($0)") }
        let outcomes = try await withThrowingTaskGroup(of: (AccountID, StoreError?).self) { group in
            group.addTask {
                do {
                    // About 800 KB in one transaction: past the limit whatever else is written.
                    try await store.transaction(for: "big") { tx in
                        for index in 0..<200 { try await tx.put(note(RecordID("b\(index)"), ["text": big])) }
                    }
                    return ("big", nil)
                } catch let error as StoreError {
                    return ("big", error)
                }
            }
            for account in smallAccounts {
                group.addTask {
                    for index in 0..<3 {
                        try await store.transaction(for: account) { tx in try await tx.put(note(RecordID("s\(index)"), ["n": 1])) }
                    }
                    return (account, nil)
                }
            }
            return try await group.reduce(into: [(AccountID, StoreError?)]()) { $0.append($1) }
        }
        #expect(outcomes.count == smallAccounts.count + 1)
        #expect(outcomes.first { $0.0 == "big" }?.1?.code == .storageFull)
        #expect(try await allChanges(of: store, for: "big").isEmpty, "nothing of the failed commit")
        #expect(outcomes.filter { $0.0 != "big" }.allSatisfy { $0.1 == nil }, "every small commit went through")
        for account in smallAccounts {
            #expect(try await allChanges(of: store, for: account).count == 3, "\(account)")
        }
        #expect(try await store.integrityProblems().isEmpty)
    }

    @Test("a commit another process made stale is turned back before it writes anything: the commits grouped with it are written, and it runs again")
    func staleCommitLeavesItsGroup() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("two.sqlite")
        let store = try SQLiteStore(path: path)
        let otherProcess = try SQLiteStore(path: path)
        let accounts = (0..<32).map { AccountID("device-\($0)") }
        let rounds = 10
        let bodyRuns = Counter()
        for round in 0..<rounds {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for account in accounts {
                    group.addTask {
                        try await store.transaction(for: account) { tx in
                            try await tx.put(note(RecordID("n\(round)"), ["round": .integer(Int64(round))]))
                        }
                    }
                }
                group.addTask {
                    let attempts = Counter()
                    try await store.transaction(for: "shared") { tx in
                        _ = bodyRuns.increment()
                        let seen = try await Self.count(in: tx)
                        if attempts.increment() == 1 {
                            // Another process increments the counter after this body read it.
                            try await otherProcess.transaction(for: "shared") { other in
                                try await other.put(note("counter", ["count": .integer(try await Self.count(in: other) + 1)]))
                            }
                        }
                        try await tx.put(note("counter", ["count": .integer(seen + 1)]))
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(bodyRuns.value == 2 * rounds, "each stale commit ran once more")
        let counter = try await store.readCommitted(for: "shared") { tx in try await Self.count(in: tx) }
        #expect(counter == Int64(2 * rounds), "no increment lost")
        // The stale attempts left nothing, not even a count of the account's revision.
        let revision = try await store.database.read { db in try StoreQueries.revision(of: "shared", db) }
        #expect(revision == Int64(2 * rounds))
        #expect(try await allChanges(of: store, for: "shared").map(\.position.rawValue) == [UInt64(2 * rounds)])
        for account in accounts {
            let changes = try await allChanges(of: store, for: account)
            #expect(changes.map(\.position.rawValue) == Array(1...UInt64(rounds)), "\(account)")
        }
        #expect(try await store.integrityProblems().isEmpty)
    }

    /// The `count` of the record `notes/counter`, 0 without one.
    private static func count(in tx: any StoreTransaction) async throws -> Int64 {
        try await tx.record(RecordKey(collection: "notes", id: "counter"))?.record.fields["count"]?.integerValue ?? 0
    }
}
