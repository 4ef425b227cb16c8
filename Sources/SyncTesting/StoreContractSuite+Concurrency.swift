import SyncCore
import Synchronization

/// The checks of concurrent transactions.
extension StoreContractSuite {
    /// Checks that ``concurrentWriters`` writers, each committing
    /// ``incrementsPerWriter`` read-modify-write increments of one shared
    /// counter record, lose no update, and that the counter appears once in
    /// the changes, at the latest position.
    /// - Throws: ``VerificationError`` naming the rule "concurrent increments".
    public func verifyConcurrentIncrements() async throws {
        let writers = concurrentWriters
        let increments = incrementsPerWriter
        try await checking(.concurrentIncrements) { store, check in
            let account: AccountID = "contract-increments"
            let key = RecordKey(collection: "counters", id: "shared")
            try await Self.put([Self.record("counters", "shared", ["count": 0])], in: store, for: account)

            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for _ in 0..<increments {
                            do {
                                try await Self.increment(key, in: store, for: account)
                            } catch let error as VerificationError {
                                throw error
                            } catch {
                                throw failure(check, "writer #\(writer) failed: \(error)")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }

            let expected = Int64(writers) * Int64(increments)
            let stored = try await Self.read(key, in: store, for: account)
            let count = stored?.record.fields["count"]
            try require(
                count == .integer(expected), check,
                "\(writers) writers × \(increments) increments left the counter at \(String(describing: count)), "
                    + "expected \(expected)")
            let changes = try await allChanges(check, of: store, for: account)
            try require(
                changes.count == 1 && changes.first?.position == stored?.position, check,
                "after the increments the changes are \(changes.map(\.record.key)) at \(changes.map(\.position)), "
                    + "expected the counter once at \(String(describing: stored?.position))")
            let latest = try await store.latestPosition(for: account)
            try require(
                latest == stored?.position, check,
                "the latest position is \(latest), the counter's last write is at \(String(describing: stored?.position))"
            )
        }
    }

    /// Checks that a reader polling "changes after the last position it saw"
    /// while ``concurrentWriters`` writers each commit ``incrementsPerWriter``
    /// transactions (of one or two new records) sees every record exactly
    /// once, at strictly increasing positions — no change skipped because it
    /// committed after a later position was already visible.
    /// - Throws: ``VerificationError`` naming the rule "concurrent reader sees every change once".
    public func verifyConcurrentReaderSeesEveryChangeOnce() async throws {
        let writers = concurrentWriters
        let transactions = incrementsPerWriter
        try await checking(.concurrentReaderSeesEveryChangeOnce) { store, check in
            let account: AccountID = "contract-concurrent-reader"
            let writersDone = ContractFlag()
            var expected = Set<RecordKey>()
            for writer in 0..<writers {
                for index in 0..<transactions {
                    expected.formUnion(Self.concurrentReaderRecords(writer: writer, index: index).map(\.key))
                }
            }

            let seen = try await withThrowingTaskGroup(of: [StoredRecord]?.self) { group in
                group.addTask {
                    try await withThrowingTaskGroup(of: Void.self) { writersGroup in
                        for writer in 0..<writers {
                            writersGroup.addTask {
                                for index in 0..<transactions {
                                    let records = Self.concurrentReaderRecords(writer: writer, index: index)
                                    do {
                                        try await Self.put(records, in: store, for: account)
                                    } catch {
                                        throw failure(check, "writer #\(writer) failed: \(error)")
                                    }
                                }
                            }
                        }
                        try await writersGroup.waitForAll()
                    }
                    writersDone.set()
                    return nil
                }
                group.addTask {
                    try await pollChanges(check, of: store, for: account, until: writersDone)
                }
                var seen: [StoredRecord] = []
                for try await result in group {
                    if let result { seen = result }
                }
                return seen
            }

            var keys = Set<RecordKey>()
            for stored in seen {
                try require(
                    keys.insert(stored.record.key).inserted, check,
                    "the reader saw \(stored.record.key) twice, the second time at \(stored.position)")
            }
            let missed = expected.subtracting(keys)
            try require(
                missed.isEmpty, check,
                "the reader missed \(missed.count) of \(expected.count) records, such as \(missed.sorted().prefix(5))")
            let unexpected = keys.subtracting(expected)
            try require(
                unexpected.isEmpty, check, "the reader saw records never written: \(unexpected.sorted().prefix(5))")
        }
    }

    /// The records writer `writer` commits in its transaction `index`: one, or two every fifth time.
    static func concurrentReaderRecords(writer: Int, index: Int) -> [SyncRecord] {
        let first = record("events", RecordID("w\(writer)-\(index)"), ["writer": .integer(Int64(writer))])
        guard index % 5 == 0 else { return [first] }
        return [first, record("events", RecordID("w\(writer)-\(index)-b"), ["writer": .integer(Int64(writer))])]
    }

    /// Reads, in one transaction, the counter at `key` and writes it back incremented.
    static func increment(_ key: RecordKey, in store: any SyncStore, for account: AccountID) async throws {
        try await store.transaction(for: account) { tx in
            guard var record = try await tx.record(key)?.record, case .integer(let count)? = record.fields["count"]
            else {
                throw VerificationError("store contract, concurrent increments: the counter \(key) is missing")
            }
            record.fields["count"] = .integer(count + 1)
            try await tx.put(record)
        }
    }

    /// Polls the changes after the last position seen, in small pages, until
    /// `done` is set and one more poll finds nothing new; returns everything
    /// seen, in the order seen.
    func pollChanges(
        _ check: String, of store: any SyncStore, for account: AccountID, until done: ContractFlag
    ) async throws -> [StoredRecord] {
        var seen: [StoredRecord] = []
        var after = ChangePosition.start
        while true {
            try Task.checkCancellation()
            let finished = done.isSet
            var foundAny = false
            while true {
                let batch = try await store.changes(for: account, after: after, in: nil, limit: 7)
                for stored in batch.records {
                    try require(
                        stored.position > after, check,
                        "polling after \(after) returned \(stored.record.key) at \(stored.position)")
                    after = stored.position
                }
                try require(
                    batch.lastPosition == after, check,
                    "a poll's lastPosition is \(batch.lastPosition), its last record is at \(after)")
                seen += batch.records
                foundAny = foundAny || !batch.records.isEmpty
                if !batch.hasMore { break }
            }
            if finished && !foundAny { return seen }
            await Task.yield()
        }
    }
}

/// A flag one task sets and another reads.
final class ContractFlag: Sendable {
    private let value = Atomic<Bool>(false)
    /// Whether the flag was set.
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    /// Sets the flag.
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
}
