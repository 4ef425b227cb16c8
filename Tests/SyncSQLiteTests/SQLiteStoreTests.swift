import Foundation
import SyncCore
import SyncSQLite
import Testing

@Suite("SQLiteStore: transactions, change sequence, metadata")
struct SQLiteStoreTests {
    @Test(arguments: StoreKind.allCases)
    func recordsReadBackWithEveryFieldAndPositionsCountFromOne(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let ada = note(
                "n1", ["text": "hello", "tags": ["a", 1, 2.5], "at": .date(Date(timeIntervalSince1970: 12.75))],
                second: 3)
            let gone = note("n2", deleted: true, second: 4)
            try await put([ada, gone], in: store)

            let changes = try await allChanges(of: store)
            #expect(
                changes == [
                    StoredRecord(record: ada, position: ChangePosition(1)),
                    StoredRecord(record: gone, position: ChangePosition(2)),
                ])
            #expect(try await store.latestPosition(for: "ada") == ChangePosition(2))
            let read = try await store.transaction(for: "ada") { tx in try await tx.record(ada.key) }
            #expect(read == StoredRecord(record: ada, position: ChangePosition(1)))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func bodyReadsItsOwnWritesBeforeCommit(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await put([note("old", ["v": 1])], in: store)
            try await store.transaction(for: "ada") { tx in
                try await tx.put(note("old", ["v": 2]))
                try await tx.put(note("new", ["v": 3]))
                try await tx.setMetadata("anchor-1", "anchor", for: "phone")
                let old = try await tx.record(RecordKey(collection: "notes", id: "old"))
                let new = try await tx.record(RecordKey(collection: "notes", id: "new"))
                // Until commit, a written record carries its last committed position.
                #expect(old?.record.fields["v"] == 2)
                #expect(old?.position == ChangePosition(1))
                #expect(new?.record.fields["v"] == 3)
                #expect(new?.position == .start)
                #expect(try await tx.metadata("anchor", for: "phone") == "anchor-1")
                try await tx.purge(RecordKey(collection: "notes", id: "new"))
                #expect(try await tx.record(RecordKey(collection: "notes", id: "new")) == nil)
            }
            let changes = try await allChanges(of: store)
            #expect(changes.map(\.record.id) == ["old"])
            #expect(changes.first?.position == ChangePosition(2))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func keysAssumedNeverWrittenAreNotReadFromTheDatabase(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await put([note("held", ["v": 1]), note("other", ["v": 2])], in: store)
            let held = RecordKey(collection: "notes", id: "held")
            let other = RecordKey(collection: "notes", id: "other")
            try await store.transaction(for: "ada") { tx in
                try await tx.assumeNeverWritten([held])
                // The database holds `held`, so a read that reached it would find it: none did.
                #expect(try await tx.record(held) == nil)
                #expect(try await tx.records(at: [held, other]).keys.sorted { $0.id < $1.id } == [other])
                try await tx.put(note("held", ["v": 3]))
                #expect(try await tx.record(held)?.record.fields["v"] == 3)
            }
            // The write still replaced the record: one row, at the next position.
            let changes = try await allChanges(of: store)
            #expect(changes.map(\.record.id) == ["other", "held"])
            #expect(changes.last?.record.fields["v"] == 3)
            #expect(changes.last?.position == ChangePosition(3))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func throwingBodyLeavesRecordsMetadataAndPositionsUntouched(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await put([note("keep", ["v": 1]), note("purge-me")], in: store)
            try await store.transaction(for: "ada") { tx in try await tx.setMetadata(1, "counter", for: "phone") }

            await #expect(throws: RollbackProbe.self) {
                try await store.transaction(for: "ada") { tx in
                    try await tx.put(note("keep", ["v": 99]))
                    try await tx.put(note("extra"))
                    try await tx.purge(RecordKey(collection: "notes", id: "purge-me"))
                    try await tx.setMetadata(2, "counter", for: "phone")
                    try await tx.setMetadata("x", "other", for: "tablet")
                    throw RollbackProbe()
                }
            }

            let changes = try await allChanges(of: store)
            #expect(changes.map(\.record.id) == ["keep", "purge-me"])
            #expect(changes.first?.record.fields["v"] == 1)
            #expect(try await store.latestPosition(for: "ada") == ChangePosition(2))
            let metadata = try await store.transaction(for: "ada") { tx in
                [try await tx.metadata("counter", for: "phone"), try await tx.metadata("other", for: "tablet")]
            }
            #expect(metadata == [1, nil])
            // The rolled-back transaction used up no position.
            try await put([note("next")], in: store)
            #expect(try await store.latestPosition(for: "ada") == ChangePosition(3))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func rewrittenRecordAppearsOnceAtItsLatestPosition(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await put([note("a"), note("b")], in: store)
            try await put([note("a", ["v": 2])], in: store)
            try await put([note("b", deleted: true)], in: store)
            let changes = try await allChanges(of: store)
            #expect(changes.map(\.record.id) == ["a", "b"])
            #expect(changes.map(\.position) == [ChangePosition(3), ChangePosition(4)])
            #expect(changes.last?.record.isDeleted == true)
            let afterThree = try await allChanges(of: store, after: ChangePosition(3))
            #expect(afterThree.map(\.record.id) == ["b"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func positionsFollowTheOrderOfEachRecordsLastWrite(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.transaction(for: "ada") { tx in
                try await tx.put(note("x"))
                try await tx.put(note("y"))
                try await tx.put(note("x", ["v": 2]))
            }
            let changes = try await allChanges(of: store)
            #expect(changes.map(\.record.id) == ["y", "x"])
            #expect(changes.map(\.position) == [ChangePosition(1), ChangePosition(2)])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changesPageWithLimitAndFilterByCollection(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            var records: [SyncRecord] = []
            for index in 0..<10 {
                records.append(note(RecordID("r\(index)"), collection: index.isMultiple(of: 2) ? "even" : "odd"))
            }
            try await put(records, in: store)

            let first = try await store.changes(for: "ada", after: .start, in: nil, limit: 4)
            #expect(first.records.count == 4)
            #expect(first.hasMore)
            #expect(first.lastPosition == ChangePosition(4))
            let last = try await store.changes(for: "ada", after: ChangePosition(8), in: nil, limit: 2)
            #expect(last.records.map(\.position) == [ChangePosition(9), ChangePosition(10)])
            #expect(!last.hasMore)
            let none = try await store.changes(for: "ada", after: ChangePosition(10), in: nil, limit: 2)
            #expect(none == ChangeBatch(records: [], lastPosition: ChangePosition(10), hasMore: false))

            let odd = try await store.changes(for: "ada", after: .start, in: ["odd"], limit: 5)
            #expect(odd.records.map(\.record.id) == ["r1", "r3", "r5", "r7", "r9"])
            #expect(!odd.hasMore)
            let oddPage = try await store.changes(for: "ada", after: ChangePosition(2), in: ["odd"], limit: 2)
            #expect(oddPage.records.map(\.record.id) == ["r3", "r5"])
            #expect(oddPage.hasMore)
            #expect(oddPage.lastPosition == ChangePosition(6))
            let empty = try await store.changes(for: "ada", after: .start, in: [], limit: 5)
            #expect(empty.records.isEmpty && !empty.hasMore && empty.lastPosition == .start)

            // A filter too large to bind is applied while scanning, with the same result.
            var many: Set<CollectionID> = ["odd"]
            for index in 0..<1_000 { many.insert(CollectionID("unused-\(index)")) }
            let scanned = try await store.changes(for: "ada", after: ChangePosition(2), in: many, limit: 2)
            #expect(scanned == oddPage)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func collectionPagesMergeCommittedAndPendingWrites(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await put([note("a"), note("c"), note("e"), note("g"), note("z", collection: "other")], in: store)
            try await store.transaction(for: "ada") { tx in
                try await tx.put(note("b"))
                try await tx.purge(RecordKey(collection: "notes", id: "c"))
                try await tx.put(note("e", ["v": 2]))
                try await tx.put(note("f"))
                var ids: [RecordID] = []
                var after: RecordID?
                while true {
                    let page = try await tx.records(in: "notes", after: after, limit: 2)
                    ids += page.map(\.record.id)
                    guard page.count == 2, let last = page.last else { break }
                    after = last.record.id
                }
                #expect(ids == ["a", "b", "e", "f", "g"])
                let first = try await tx.records(in: "notes", after: nil, limit: 3)
                #expect(first.map(\.record.id) == ["a", "b", "e"])
                #expect(first.last?.record.fields["v"] == 2)
                #expect(first.last?.position == ChangePosition(3))
            }
            let committed = try await store.transaction(for: "ada") { tx in
                try await tx.records(in: "notes", after: "a", limit: 10)
            }
            #expect(committed.map(\.record.id) == ["b", "e", "f", "g"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func accountsNeverSeeEachOthersData(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await put([note("shared-id", ["owner": "ada"])], in: store, for: "ada")
            try await put([note("shared-id", ["owner": "bob"]), note("b2")], in: store, for: "bob")
            try await store.transaction(for: "bob") { tx in try await tx.setMetadata("bob's", "anchor", for: "phone") }

            let adaChanges = try await allChanges(of: store, for: "ada")
            #expect(adaChanges.map { $0.record.fields["owner"] } == ["ada"])
            #expect(try await store.latestPosition(for: "ada") == ChangePosition(1))
            #expect(try await store.latestPosition(for: "bob") == ChangePosition(2))
            #expect(try await store.latestPosition(for: "carol") == .start)
            #expect(try await allChanges(of: store, for: "carol").isEmpty)
            let adaView = try await store.transaction(for: "ada") { tx in
                (
                    try await tx.record(RecordKey(collection: "notes", id: "b2")),
                    try await tx.records(in: "notes", after: nil, limit: 10).count,
                    try await tx.metadata("anchor", for: "phone")
                )
            }
            #expect(adaView.0 == nil)
            #expect(adaView.1 == 1)
            #expect(adaView.2 == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func metadataIsSetReplacedAndRemovedPerPeer(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let value: SyncValue = [
                "anchor": "a1", "at": .date(Date(timeIntervalSince1970: 5)), "n": .unsignedInteger(.max),
            ]
            try await store.transaction(for: "ada") { tx in
                try await tx.setMetadata(value, "state", for: "phone")
                try await tx.setMetadata(1, "state", for: "tablet")
            }
            try await store.transaction(for: "ada") { tx in
                #expect(try await tx.metadata("state", for: "phone") == value)
                try await tx.setMetadata(2, "state", for: "tablet")
                try await tx.setMetadata(nil, "state", for: "phone")
                #expect(try await tx.metadata("state", for: "phone") == nil)
            }
            let after = try await store.transaction(for: "ada") { tx in
                [try await tx.metadata("state", for: "phone"), try await tx.metadata("state", for: "tablet")]
            }
            #expect(after == [nil, 2])
            // Metadata is no record write: it takes no position.
            #expect(try await store.latestPosition(for: "ada") == .start)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func purgeRemovesWithoutTombstoneAndKeepsTheLatestPosition(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await put([note("a"), note("b", deleted: true)], in: store)
            try await store.transaction(for: "ada") { tx in
                try await tx.purge(RecordKey(collection: "notes", id: "b"))
                try await tx.purge(RecordKey(collection: "notes", id: "never-written"))
            }
            #expect(try await allChanges(of: store).map(\.record.id) == ["a"])
            #expect(try await store.latestPosition(for: "ada") == ChangePosition(2))
            let read = try await store.transaction(for: "ada") { tx in
                try await tx.record(RecordKey(collection: "notes", id: "b"))
            }
            #expect(read == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func limitsBelowOneAreInvalidArguments(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let changesError = await #expect(throws: StoreError.self) {
                try await store.changes(for: "ada", after: .start, in: nil, limit: 0)
            }
            #expect(changesError?.code == .invalidArgument)
            let recordsError = await #expect(throws: StoreError.self) {
                try await store.transaction(for: "ada") { tx in
                    try await tx.records(in: "notes", after: nil, limit: -1)
                }
            }
            #expect(recordsError?.code == .invalidArgument)
            let hugeLimit = try await store.changes(for: "ada", after: .start, in: nil, limit: .max)
            #expect(hugeLimit.records.isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func transactionUsedAfterItsBodyReturnedThrows(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let escaped = try await store.transaction(for: "ada") { tx in tx }
            let error = await #expect(throws: StoreError.self) { try await escaped.put(note("late")) }
            #expect(error?.code == .invalidArgument)
            #expect(try await allChanges(of: store).isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func tooDeepFieldIsRefusedAtPut(kind: StoreKind) async throws {
        var deep: SyncValue = 1
        for _ in 0..<2_000 { deep = [deep] }
        let value = deep
        try await withStore(kind) { (store) async throws in
            let error = await #expect(throws: StoreError.self) {
                try await put([note("deep", ["v": value])], in: store)
            }
            #expect(error?.code == .invalidArgument)
            #expect(try await allChanges(of: store).isEmpty)
        }
    }

    @Test func concurrentIncrementsInMemoryLoseNothing() async throws {
        let store = try SQLiteStore.inMemory()
        let key = RecordKey(collection: "counters", id: "c")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<100 {
                        try await store.transaction(for: "ada") { tx in
                            let current = try await tx.record(key)?.record.fields["n"]?.integerValue ?? 0
                            try await tx.put(note("c", ["n": .integer(current + 1)], collection: "counters"))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = try await store.transaction(for: "ada") { tx in try await tx.record(key) }
        #expect(final?.record.fields["n"] == 400)
        #expect(final?.position == ChangePosition(400))
    }
}
