import Foundation
import PostgresNIO
import SyncCore
import SyncPostgres
import Testing
import TestSupport

/// The standby of ``ReplicaReadTests``.
let replicaReadStandby = SuiteStandby()

/// The ids of `batch`'s records, in order.
private func ids(_ batch: ChangeBatch) -> [RecordID] { batch.records.map(\.record.id) }

@Suite(
    "reads of changes from a PostgreSQL hot standby",
    .serialized,  // one test pauses the standby's replay
    .enabled("no PostgreSQL server (see the reason printed above)") { await TestPostgresServer.isAvailable })
struct ReplicaReadTests {
    @Test("a pull right after a write sees the write, read from the standby")
    func pullAfterWriteIsReadFromTheStandby() async throws {
        let standby = try await replicaReadStandby.standby
        try await withReplicaStores(on: standby, wait: .seconds(10)) { stores in
            // A standby that has just started, on a machine running the whole suite, may take longer than any
            // wait to answer its first connection: wait for it here, outside what the test measures.
            try await stores.waitUntilStandbyCaughtUp()
            var expected: [RecordID] = []
            for round in 1...3 {
                // Written through another store on the primary, as another server process would.
                try await put([note(RecordID("n\(round)"), ["round": .integer(Int64(round))])], in: stores.writer)
                expected.append(RecordID("n\(round)"))
                let batch = try await stores.reader.changes(for: "ada", after: .start, in: nil, limit: 100)
                #expect(ids(batch) == expected)
                #expect(batch.lastPosition == ChangePosition(UInt64(round)))
                #expect(batch.records.last?.record.fields["round"] == .integer(Int64(round)))
            }
            #expect(stores.reader.replicaReadCounts == PostgresStore.ReplicaReadCounts(replica: 3, primary: 0))
            #expect(stores.writer.replicaReadCounts == PostgresStore.ReplicaReadCounts())
            // Writes, and reads inside transactions, stay on the primary: the standby refuses writes.
            try await stores.reader.transaction(for: "ada") { tx in
                let first = try await tx.record(RecordKey(collection: "notes", id: "n1"))
                #expect(first?.position == ChangePosition(1))
                try await tx.put(note("n4"))
            }
            #expect(ids(try await stores.reader.changes(for: "ada", after: ChangePosition(3), in: nil, limit: 100)) == ["n4"])
        }
    }

    @Test("a standby whose replay is paused leaves the read to the primary, which has the latest writes")
    func laggingStandbyFallsBackToThePrimary() async throws {
        let standby = try await replicaReadStandby.standby
        try await withReplicaStores(on: standby, wait: .milliseconds(50), retryDelay: .zero) { stores in
            try await put([note("n1")], in: stores.writer)
            try await stores.standby.query("SELECT pg_wal_replay_pause()")
            do {
                try await put([note("n2"), note("n3")], in: stores.writer)
                let before = stores.reader.replicaReadCounts
                let batch = try await stores.reader.changes(for: "ada", after: .start, in: nil, limit: 100)
                #expect(ids(batch) == ["n1", "n2", "n3"])
                let after = stores.reader.replicaReadCounts
                #expect(after.primary == before.primary + 1)
                #expect(after.replica == before.replica)
                // A later pull from the last position the primary gave gets the next write, still from the primary.
                try await put([note("n4")], in: stores.writer)
                let next = try await stores.reader.changes(for: "ada", after: batch.lastPosition, in: nil, limit: 100)
                #expect(ids(next) == ["n4"])
                #expect(stores.reader.replicaReadCounts.primary == before.primary + 2)
            } catch {
                try await stores.standby.query("SELECT pg_wal_replay_resume()")
                throw error
            }
            try await stores.standby.query("SELECT pg_wal_replay_resume()")
        }
    }
}

/// The standby of ``ReplicaFailureTests``, which crashes it.
private let crashedStandby = SuiteStandby()

@Suite(
    "reads of changes when the PostgreSQL hot standby goes away",
    .enabled("no PostgreSQL server (see the reason printed above)") { await TestPostgresServer.isAvailable })
struct ReplicaFailureTests {
    @Test("a paged pull whose standby crashes between two pages gets every record once, from the primary")
    func standbyCrashingMidPullLosesNothing() async throws {
        let standby = try await crashedStandby.standby
        // After the crash the standby's pool keeps a read waiting while it tries to connect again, until the
        // store's wait ends it; a long delay sends every later page to the primary at once. The wait is long
        // enough for the first page: the router waits for the primary's current position, which the other
        // suites' writes keep moving, and a loaded machine's standby took more than a second to replay it.
        try await withReplicaStores(on: standby, wait: .seconds(10), retryDelay: .seconds(600)) { stores in
            let written = (1...7).map { RecordID("n\($0)") }
            try await put(written.map { note($0) }, in: stores.writer)
            try await stores.waitUntilStandbyCaughtUp()
            var pages = stores.reader.changePages(for: "ada", after: .start, pageSize: 3).makeAsyncIterator()
            let first = try #require(try await pages.next())
            #expect(stores.reader.replicaReadCounts == PostgresStore.ReplicaReadCounts(replica: 1, primary: 0))

            try await standby.crash()
            var read = ids(first)
            var positions = first.records.map(\.position)
            while let page = try await pages.next() {
                read += ids(page)
                positions += page.records.map(\.position)
            }
            #expect(read == written)
            #expect(positions == (1...7).map { ChangePosition(UInt64($0)) })
            #expect(stores.reader.replicaReadCounts == PostgresStore.ReplicaReadCounts(replica: 1, primary: 2))

            // Writes go on, and so do pulls.
            try await put([note("n8")], in: stores.writer)
            #expect(ids(try await stores.reader.changes(for: "ada", after: ChangePosition(7), in: nil, limit: 10)) == ["n8"])
        }
    }
}
