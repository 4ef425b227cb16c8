import Foundation
import GRDB
import SyncCore
import Synchronization
import Testing

@testable import SyncSQLite

@Suite("SQLiteStore: database files")
struct SQLiteStoreFileTests {
    /// Increments the counter record `key` of `account` by one, read-modify-write.
    private static func increment(
        _ key: RecordKey, in store: SQLiteStore, for account: AccountID = "ada"
    ) async throws {
        try await store.transaction(for: account) { tx in
            let current = try await tx.record(key)?.record.fields["n"]?.integerValue ?? 0
            try await tx.put(note(key.id, ["n": .integer(current + 1)], collection: key.collection))
        }
    }

    @Test("8 writers × 200 transactions on one file, half of them on one shared record, lose no update")
    func concurrentWritersOnOneFileLoseNoUpdate() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.file("soak.sqlite"))
        let shared = RecordKey(collection: "counters", id: "shared")
        let writers = 8
        let transactionsPerWriter = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    let own = RecordKey(collection: "counters", id: RecordID("writer-\(writer)"))
                    for round in 0..<transactionsPerWriter {
                        // Half the writers also touch a second account, which runs beside the first.
                        if writer.isMultiple(of: 2), round.isMultiple(of: 10) {
                            try await Self.increment(own, in: store, for: "bob")
                        }
                        try await Self.increment(round.isMultiple(of: 2) ? shared : own, in: store)
                    }
                }
            }
            try await group.waitForAll()
        }

        let total = writers * transactionsPerWriter
        let changes = try await allChanges(of: store)
        let counts = Dictionary(
            uniqueKeysWithValues: changes.map { ($0.record.id, $0.record.fields["n"]?.integerValue) })
        #expect(counts["shared"] == Int64(total / 2))
        for writer in 0..<writers {
            #expect(counts[RecordID("writer-\(writer)")] == Int64(transactionsPerWriter / 2))
        }
        #expect(changes.count == writers + 1)
        #expect(changes.last?.position == ChangePosition(UInt64(total)))
        #expect(try await store.latestPosition(for: "ada") == ChangePosition(UInt64(total)))
        let bob = try await allChanges(of: store, for: "bob")
        let bobsCount = SyncValue.integer(Int64(transactionsPerWriter / 10))
        #expect(bob.map { $0.record.fields["n"] } == Array(repeating: bobsCount, count: writers / 2))
        #expect(try await store.integrityProblems().isEmpty)
        try store.close()
    }

    @Test func reopeningAfterCloseKeepsEverything() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("reopen.sqlite")

        let before: [StoredRecord]
        do {
            let store = try SQLiteStore(path: path)
            try await put([note("a", ["v": 1.5]), note("b"), note("c", deleted: true)], in: store)
            try await put([note("b", ["v": "again"])], in: store, for: "ada")
            try await put([note("x")], in: store, for: "bob")
            try await store.transaction(for: "ada") { tx in
                try await tx.purge(RecordKey(collection: "notes", id: "a"))
                try await tx.setMetadata(["anchor": "42"], "state", for: "phone")
            }
            before = try await allChanges(of: store)
            try store.close()
            let closedError = await #expect(throws: StoreError.self) { try await store.latestPosition(for: "ada") }
            #expect(closedError?.code == .unavailable)
        }

        let reopened = try SQLiteStore(path: path)
        #expect(try await allChanges(of: reopened) == before)
        #expect(before.map(\.record.id) == ["c", "b"])
        #expect(try await reopened.latestPosition(for: "ada") == ChangePosition(4))
        #expect(try await allChanges(of: reopened, for: "bob").map(\.record.id) == ["x"])
        let state = try await reopened.transaction(for: "ada") { tx in try await tx.metadata("state", for: "phone") }
        #expect(state == ["anchor": "42"])
        try await put([note("d")], in: reopened)
        #expect(try await reopened.latestPosition(for: "ada") == ChangePosition(5))
        #expect(try await reopened.integrityProblems().isEmpty)
        try reopened.close()
    }

    @Test(arguments: [SQLiteStore.Durability.full, .normal])
    func fileUsesWriteAheadLogAndTheConfiguredDurability(durability: SQLiteStore.Durability) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(
            path: directory.file("pragmas.sqlite"), configuration: SQLiteStore.Configuration(durability: durability))
        let (journalMode, synchronous) = try await store.database.write { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(journalMode == "wal")
        #expect(synchronous == (durability == .full ? 2 : 1))
        let readerSynchronous = try await store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(readerSynchronous == synchronous)
        try store.close()
    }

    @Test func twoStoresOnOneFileLoseNoUpdate() async throws {
        // Two stores on one file have separate connections and locks, as two processes would.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("shared.sqlite")
        let configuration = SQLiteStore.Configuration(maximumAttempts: 1_000)
        let first = try SQLiteStore(path: path, configuration: configuration)
        let second = try SQLiteStore(path: path, configuration: configuration)
        let key = RecordKey(collection: "counters", id: "shared")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in [first, second, first, second] {
                group.addTask {
                    for _ in 0..<150 { try await Self.increment(key, in: store) }
                }
            }
            try await group.waitForAll()
        }
        let final = try await second.transaction(for: "ada") { tx in try await tx.record(key) }
        #expect(final?.record.fields["n"] == 600)
        #expect(try await first.latestPosition(for: "ada") == ChangePosition(600))
        #expect(try await first.integrityProblems().isEmpty)
        try first.close()
        try second.close()
    }

    @Test("reads that must agree (records with a metadata value, records of two collections) never see half of another process's commit")
    func readsThatMustAgreeSeeWholeCommits() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("agree.sqlite")
        let reader = try SQLiteStore(path: path)
        let writer = try SQLiteStore(path: path)
        let (notes, tasks) = (RecordKey(collection: "notes", id: "n"), RecordKey(collection: "tasks", id: "t"))
        let commits = 300
        let torn = Counter()
        let reads = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Each commit writes the same count into two records and a metadata value.
                for count in 1...commits {
                    try await writer.transaction(for: "ada") { tx in
                        try await tx.put(note("n", ["n": .integer(Int64(count))]))
                        try await tx.put(note("t", ["n": .integer(Int64(count))], collection: "tasks"))
                        try await tx.setMetadata(.integer(Int64(count)), "count", for: "server")
                    }
                }
            }
            group.addTask {
                var last: Int64 = 0
                while last < Int64(commits) {
                    // Each a read of its own: a transaction keeps what it read, so a second read of `notes`
                    // in the same body would give the first one's answer.
                    let (note, meta) = try await reader.readCommitted(for: "ada") { tx in
                        let read = try await tx.records(at: [notes], withMetadata: "count", for: "server")
                        return (read.records[notes]?.record.fields["n"]?.integerValue ?? 0, read.metadata?.integerValue ?? 0)
                    }
                    let both = try await reader.readCommitted(for: "ada") { tx in
                        try await tx.records(at: [notes, tasks]).mapValues { $0.record.fields["n"]?.integerValue ?? 0 }
                    }
                    if note != meta || both[notes] != both[tasks] { _ = torn.increment() }
                    _ = reads.increment()
                    last = note
                }
            }
            try await group.waitForAll()
        }
        #expect(torn.value == 0, "\(torn.value) of \(reads.value) reads saw half of a commit")
        #expect(reads.value > 1)
        try reader.close()
        try writer.close()
    }

    @Test func bodyRunsAgainWhenAnotherProcessCommittedMeanwhile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("retry.sqlite")
        let first = try SQLiteStore(path: path)
        let other = try SQLiteStore(path: path)
        let key = RecordKey(collection: "counters", id: "c")
        let runs = Counter()
        try await first.transaction(for: "ada") { tx in
            let run = runs.increment()
            let current = try await tx.record(key)?.record.fields["n"]?.integerValue ?? 0
            if run == 1 { try await Self.increment(key, in: other) }  // another "process" commits in between
            try await tx.put(note("c", ["n": .integer(current + 10)], collection: "counters"))
        }
        #expect(runs.value == 2)
        let final = try await other.transaction(for: "ada") { tx in try await tx.record(key) }
        #expect(final?.record.fields["n"] == 11)
        try first.close()
        try other.close()
    }

    @Test func readOnlyBodyWhoseReadsSawDifferentCommitsRunsAgain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("snapshot.sqlite")
        let first = try SQLiteStore(path: path)
        let other = try SQLiteStore(path: path)
        let left = RecordKey(collection: "counters", id: "left")
        let right = RecordKey(collection: "counters", id: "right")
        let runs = Counter()
        // `other` moves one unit from left to right, so left + right is always 10 in any committed state.
        try await put(
            [note("left", ["n": 10], collection: "counters"), note("right", ["n": 0], collection: "counters")],
            in: first)
        let sum = try await first.transaction(for: "ada") { tx in
            let leftValue = try await tx.record(left)?.record.fields["n"]?.integerValue ?? 0
            if runs.increment() == 1 {
                try await put(
                    [note("left", ["n": 9], collection: "counters"), note("right", ["n": 1], collection: "counters")],
                    in: other)
            }
            let rightValue = try await tx.record(right)?.record.fields["n"]?.integerValue ?? 0
            return leftValue + rightValue
        }
        #expect(sum == 10)
        #expect(runs.value == 2)
        try first.close()
        try other.close()
    }

    @Test func retriesAreBoundedByMaximumAttempts() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("bounded.sqlite")
        let first = try SQLiteStore(path: path, configuration: SQLiteStore.Configuration(maximumAttempts: 3))
        let other = try SQLiteStore(path: path)
        let key = RecordKey(collection: "counters", id: "c")
        let runs = Counter()
        let error = await #expect(throws: StoreError.self) {
            try await first.transaction(for: "ada") { tx in
                _ = runs.increment()
                _ = try await tx.record(key)
                try await Self.increment(key, in: other)
                try await tx.put(note("c", ["n": -1], collection: "counters"))
            }
        }
        #expect(error?.code == .conflict)
        #expect(runs.value == 3)
        let final = try await other.transaction(for: "ada") { tx in try await tx.record(key) }
        #expect(final?.record.fields["n"] == 3)
        try first.close()
        try other.close()
    }

    @Test func aFileThatIsNoDatabaseIsReportedCorrupt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("not-a-database.sqlite")
        try Data(repeating: 0x42, count: 8_192).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: StoreError.self) { try SQLiteStore(path: path) }
        #expect(error?.code == .corrupt)
    }

    @Test func aMissingDirectoryIsReportedUnavailable() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let error = #expect(throws: StoreError.self) { try SQLiteStore(path: directory.file("missing/store.sqlite")) }
        #expect(error?.code == .unavailable)
    }

    @Test func aDatabaseFromANewerVersionIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("newer.sqlite")
        let store = try SQLiteStore(path: path)
        try await store.database.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations(identifier) VALUES ('v99: from the future')")
        }
        try store.close()
        let error = #expect(throws: StoreError.self) { try SQLiteStore(path: path) }
        #expect(error?.code == .corrupt)
    }
}

/// A thread-safe counter for counting how often a transaction body runs.
final class Counter: Sendable {
    private let storage = Mutex(0)

    /// Counts one and returns the new count.
    func increment() -> Int {
        storage.withLock { count in
            count += 1
            return count
        }
    }

    /// The count.
    var value: Int { storage.withLock { $0 } }
}

@Suite("SQLiteStore: a full disk")
struct SQLiteStoreFullDiskTests {
    /// The limit is SQLite's `max_page_count` (``SQLiteStore/Configuration/maximumSize``):
    /// mounting a small filesystem needs privileges a test run does not have.
    @Test("a write past the size limit fails as storageFull, stores nothing, and goes through once the limit is raised")
    func writePastTheLimit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("small.sqlite")
        var configuration = SQLiteStore.Configuration(maximumSize: 256 * 1024)
        var store = try SQLiteStore(path: path, configuration: configuration)
        let text = SyncValue.string(String(repeating: "x", count: 2_000))
        var written = 0
        var failure: StoreError?
        while failure == nil, written < 1_000 {
            do {
                try await store.transaction(for: "ada") { [written] tx in
                    for index in 0..<10 {
                        try await tx.put(note(RecordID("n\(written + index)"), ["text": text]))
                    }
                }
                written += 10
            } catch let error as StoreError {
                failure = error
            }
        }
        let error = try #require(failure)
        #expect(error.code == .storageFull)
        #expect(written > 0)
        // Nothing of the failed transaction is there: whole batches only.
        let changes = try await allChanges(of: store)
        #expect(changes.count == written)
        #expect(try await store.latestPosition(for: "ada") == ChangePosition(UInt64(written)))
        try store.close()

        configuration.maximumSize = 64 * 1024 * 1024
        store = try SQLiteStore(path: path, configuration: configuration)
        try await store.transaction(for: "ada") { tx in try await tx.put(note("after", ["text": text])) }
        #expect(try await allChanges(of: store).count == written + 1)
        #expect(try await store.integrityProblems().isEmpty)
        try store.close()
    }
}

@Suite("SQLiteStore: the write-ahead log")
struct SQLiteStoreWriteAheadLogTests {
    /// The size the log file reached after `commits` commits of one 8 KB record each (some 3 pages of log),
    /// each followed by the copies beside the commits it asked for, unless `copiesBeside` is off (the file
    /// keeps its largest size: the first write after a copy that reached the log's end starts it again from
    /// its beginning), and how many copies beside the commits ran.
    private func logSize(checkpointPages: Int, commits: Int, copiesBeside: Bool) async throws -> (bytes: Int, copies: Int) {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("log.sqlite")
        let store = try SQLiteStore(
            path: path, configuration: .init(durability: .normal, checkpointPages: checkpointPages))
        let checkpointer = try #require(store.commits.checkpointer)
        checkpointer.copiesBeside.store(copiesBeside, ordering: .relaxed)
        let text = SyncValue.string(String(repeating: "x", count: 8_000))
        for index in 0..<commits {
            try await store.transaction(for: "ada") { tx in try await tx.put(note(RecordID("n\(index)"), ["text": text])) }
            try await checkpointer.finishCopies()
        }
        let size = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
        #expect(try await allChanges(of: store).count == commits)
        #expect(try await store.integrityProblems().isEmpty)
        let copies = checkpointer.checkpointsRun.load(ordering: .relaxed)
        try store.close()
        let reopened = try SQLiteStore(path: path)
        #expect(try await allChanges(of: reopened).count == commits)
        try reopened.close()
        return (try #require(size), copies)
    }

    @Test("the commit that brings the log to checkpointPages pages copies it into the database, and none before")
    func checkpointPages() async throws {
        // 300 commits of some 3 pages each: about 900 pages of log.
        let small = try await logSize(checkpointPages: 64, commits: 300, copiesBeside: false)
        let large = try await logSize(checkpointPages: 4_000, commits: 300, copiesBeside: false)
        #expect(small.bytes <= 96 * 4_120, "a log of \(small.bytes) bytes for a mark of 64 pages")
        #expect(large.bytes >= 600 * 4_120, "a log of \(large.bytes) bytes for a mark of 4,000 pages: it was copied early")
        #expect(small.copies == 0 && large.copies == 0)
    }

    @Test("the log is copied beside the commits each time it grows by an eighth of checkpointPages, and starts again")
    func copiesBesideTheCommits() async throws {
        // About 900 pages of log, an eighth of the mark 500: one copy beside the commits, after which the
        // next commit starts the log again, so it never reaches the mark.
        let (bytes, copies) = try await logSize(checkpointPages: 4_000, commits: 300, copiesBeside: true)
        #expect(copies >= 1)
        #expect(bytes <= 520 * 4_120, "a log of \(bytes) bytes: it did not start again after the copy")
    }
}
