import SyncCore

/// The checks of the change sequence: order, paging and the collection filter.
extension StoreContractSuite {
    /// Checks that the changes after a position hold every record written
    /// later, tombstones included, in commit order, with strictly increasing
    /// positions, and that ``SyncStore/latestPosition(for:)`` is the last of them.
    /// - Throws: ``VerificationError`` naming the rule "change sequence".
    public func verifyChangeSequence() async throws {
                try await checking(.changeSequence) { store, check in
            let account: AccountID = "contract-change-sequence"
            let commits: [[SyncRecord]] = [
                [Self.record("notes", "n1", ["v": 1]), Self.record("tasks", "t1")],
                [Self.record("notes", "n2"), Self.record("notes", "n1", deleted: true, second: 1)],
                [Self.record("tasks", "t2", deleted: true)],
                [Self.record("notes", "n3")],
            ]
            var positionsAfterCommit: [ChangePosition] = []
            for commit in commits {
                try await Self.put(commit, in: store, for: account)
                positionsAfterCommit.append(try await store.latestPosition(for: account))
            }
            for (index, position) in positionsAfterCommit.enumerated().dropFirst() {
                let previous = positionsAfterCommit[index - 1]
                try require(
                    position > previous, check,
                    "the latest position went from \(previous) to \(position) over commit #\(index + 1)")
            }

            let changes = try await allChanges(check, of: store, for: account)
            try requireDistinctKeys(changes, check)
            // n1 was written again in the second commit, so it counts there.
            let expectedGroups: [Set<RecordKey>] = [
                [RecordKey(collection: "tasks", id: "t1")],
                [RecordKey(collection: "notes", id: "n2"), RecordKey(collection: "notes", id: "n1")],
                [RecordKey(collection: "tasks", id: "t2")],
                [RecordKey(collection: "notes", id: "n3")],
            ]
            let keys = changes.map(\.record.key)
            try require(
                keys.count == 5 && Self.matchesGroups(keys, expectedGroups), check,
                "the changes are \(keys), expected them in commit order: \(expectedGroups.map { $0.sorted() })")
            let n1 = changes.first { $0.record.id == "n1" }
            try require(n1?.record.isDeleted == true, check, "the tombstone of notes/n1 is missing from the changes")
            let t2 = changes.first { $0.record.id == "t2" }
            try require(t2?.record.isDeleted == true, check, "the tombstone of tasks/t2 is missing from the changes")
            let last = changes.last?.position
            try require(
                last == positionsAfterCommit.last, check,
                "the last change is at \(String(describing: last)), the latest position is \(positionsAfterCommit[3])")

            for (index, position) in positionsAfterCommit.enumerated() {
                let later = try await allChanges(check, of: store, for: account, after: position)
                let expected = expectedGroups.dropFirst(index + 1).reduce(0) { $0 + $1.count }
                try require(
                    later.count == expected && later.allSatisfy({ $0.position > position }), check,
                    "after commit #\(index + 1) (position \(position)) the changes are \(later.map(\.record.key)), "
                        + "expected the \(expected) written later")
            }
            try await verifyCommittedPositions(check, of: store, for: account)
        }
    }

    /// Checks what ``SyncStore/transactionWithPositions(for:_:)`` tells, where the store tells it: the
    /// commit's record writes are exactly the changes after ``CommittedPositions/before``, the last at
    /// ``CommittedPositions/latest``, the account's latest position; a transaction that writes nothing
    /// tells nothing.
    private func verifyCommittedPositions(_ check: String, of store: any SyncStore, for account: AccountID) async throws {
        let written = [Self.record("notes", "w1"), Self.record("tasks", "w2")]
        let (_, told) = try await store.transactionWithPositions(for: account) { tx in
            for record in written { try await tx.put(record) }
            try await tx.purge(RecordKey(collection: "notes", id: "n3"))
            try await tx.setMetadata("after-w2", "anchor", for: "contract-peer")
        }
        if let told {
            let latest = try await store.latestPosition(for: account)
            let after = try await allChanges(check, of: store, for: account, after: told.before)
            try require(
                told.recordWrites == 2 && told.latest == latest
                    && Set(after.map(\.record.key)) == Set(written.map(\.key)) && after.last?.position == told.latest,
                check,
                "a commit of 2 records told positions \(told.before) … \(told.latest), the latest position is \(latest), "
                    + "and the changes after \(told.before) are \(after.map(\.record.key))")
        }
        let (_, nothing) = try await store.transactionWithPositions(for: account) { tx in
            _ = try await tx.record(RecordKey(collection: "notes", id: "w1"))
        }
        try require(nothing == nil, check, "a transaction that wrote nothing told positions \(String(describing: nothing))")
    }

    /// Checks paging through the changes: each page holds at most `limit`
    /// records, ``ChangeBatch/hasMore`` says whether more follow,
    /// ``ChangeBatch/lastPosition`` is where the next page starts, and asking
    /// after the end gives an empty page at the position asked after.
    /// - Throws: ``VerificationError`` naming the rule "paging".
    public func verifyPaging() async throws {
                try await checking(.paging) { store, check in
            let account: AccountID = "contract-paging"
            let written = (1...7).map { Self.record("notes", RecordID("p\($0)")) }
            try await Self.putEach(written, in: store, for: account)

            var after = ChangePosition.start
            var seen: [RecordID] = []
            for (index, expectedCount) in [3, 3, 1].enumerated() {
                let batch = try await store.changes(for: account, after: after, in: nil, limit: 3)
                let ids = batch.records.map(\.record.id)
                try require(
                    batch.records.count == expectedCount, check,
                    "page #\(index + 1) with limit 3 holds \(ids), expected \(expectedCount) records")
                let expectMore = index < 2
                try require(
                    batch.hasMore == expectMore, check,
                    "page #\(index + 1) (\(ids)) says hasMore \(batch.hasMore), expected \(expectMore)")
                try require(
                    batch.lastPosition == batch.records.last?.position, check,
                    "page #\(index + 1) has lastPosition \(batch.lastPosition), its last record is at "
                        + "\(String(describing: batch.records.last?.position))")
                seen += ids
                after = batch.lastPosition
            }
            try require(seen == written.map(\.id), check, "the pages held \(seen), expected p1 … p7 in order")

            let end = try await store.changes(for: account, after: after, in: nil, limit: 3)
            try require(
                end == ChangeBatch(records: [], lastPosition: after, hasMore: false), check,
                "asking after the last change gave \(end), expected an empty page at \(after)")

            let whole = try await store.changes(for: account, after: .start, in: nil, limit: 100)
            try require(
                whole.records.count == 7 && !whole.hasMore, check,
                "one page with limit 100 holds \(whole.records.count) records with hasMore \(whole.hasMore)")

            for limit in [1, 4, 100] {
                try await requireSameEncodedChanges(check, of: store, for: account, after: .start, in: nil, limit: limit)
            }

            let single = try await allChanges(check, of: store, for: account, limit: 1)
            try require(
                single.map(\.record.id) == written.map(\.id), check,
                "paging with limit 1 gave \(single.map(\.record.id)), expected p1 … p7")
        }
    }

    /// Requires ``SyncStore/encodedChanges(for:after:in:limit:)`` to give what
    /// ``SyncStore/changes(for:after:in:limit:)`` gives, once decoded.
    private func requireSameEncodedChanges(
        _ check: String, of store: any SyncStore, for account: AccountID, after position: ChangePosition,
        in collections: Set<CollectionID>?, limit: Int
    ) async throws {
        let decoded = try await store.changes(for: account, after: position, in: collections, limit: limit)
        let encoded = try await store.encodedChanges(for: account, after: position, in: collections, limit: limit)
        let again = ChangeBatch(
            records: try encoded.records.map { try $0.decoded() }, lastPosition: encoded.lastPosition, hasMore: encoded.hasMore)
        try require(
            again == decoded, check,
            "encodedChanges(in: \(collections.map { $0.sorted() } as Any), limit: \(limit)) decoded gave \(again), "
                + "changes gave \(decoded)")
    }

    /// Checks that the changes asked for some collections hold only records of
    /// those collections, in order, with paging that counts only them, and
    /// that an empty set of collections gives no changes.
    /// - Throws: ``VerificationError`` naming the rule "collection filter".
    public func verifyCollectionFilter() async throws {
                try await checking(.collectionFilter) { store, check in
            let account: AccountID = "contract-collection-filter"
            let collections: [CollectionID] = ["notes", "tasks", "tags"]
            let written = (0..<15).map { Self.record(collections[$0 % 3], RecordID("r\($0)")) }
            try await Self.putEach(written, in: store, for: account)

            for filter: Set<CollectionID> in [["notes"], ["notes", "tags"], ["tasks"], ["missing"]] {
                let expected = written.filter { filter.contains($0.collection) }.map(\.key)
                let changes = try await allChanges(check, of: store, for: account, in: filter, limit: 2)
                try require(
                    changes.map(\.record.key) == expected, check,
                    "changes(in: \(filter.sorted())) gave \(changes.map(\.record.key)), expected \(expected)")
            }

            for filter: Set<CollectionID> in [["notes"], ["notes", "tags"], ["missing"], []] {
                try await requireSameEncodedChanges(check, of: store, for: account, after: .start, in: filter, limit: 3)
            }

            let notesOnly = try await store.changes(for: account, after: .start, in: ["notes"], limit: 4)
            try require(
                notesOnly.records.count == 4 && notesOnly.hasMore, check,
                "changes(in: [notes], limit: 4) of 5 notes gave \(notesOnly.records.count) with hasMore \(notesOnly.hasMore)"
            )
            let rest = try await store.changes(for: account, after: notesOnly.lastPosition, in: ["notes"], limit: 4)
            try require(
                rest.records.map(\.record.id) == ["r12"] && !rest.hasMore, check,
                "the second page of changes(in: [notes], limit: 4) gave \(rest.records.map(\.record.id)) "
                    + "with hasMore \(rest.hasMore), expected [r12] and no more")

            let none = try await store.changes(for: account, after: .start, in: [], limit: 10)
            try require(
                none == ChangeBatch(records: [], lastPosition: .start, hasMore: false), check,
                "changes(in: []) gave \(none), expected no changes")

            let tasks = try await Self.allRecords(in: "tasks", of: store, for: account).map(\.record.key)
            let expectedTasks = written.filter { $0.collection == "tasks" }.map(\.key).sorted()
            try require(tasks == expectedTasks, check, "records(in: tasks) gave \(tasks), expected \(expectedTasks)")
        }
    }

    /// Whether `keys` consists of the groups in order, each group's keys in any order.
    static func matchesGroups(_ keys: [RecordKey], _ groups: [Set<RecordKey>]) -> Bool {
        var rest = keys[...]
        for group in groups {
            guard rest.count >= group.count, Set(rest.prefix(group.count)) == group else { return false }
            rest = rest.dropFirst(group.count)
        }
        return rest.isEmpty
    }
}
