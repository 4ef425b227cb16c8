import Foundation
import SyncCore
import SyncTesting
import Testing

@Suite("The journal")
struct SyncJournalTests {
    let store = MemoryStore()
    let account: AccountID = "device"
    let key = RecordKey(collection: "notes", id: "n1")

    func version(_ fields: [String: SyncValue], deleted: Bool = false, at seconds: Double = 0, node: PeerID = "server")
        -> SyncRecord
    {
        SyncRecord(
            collection: key.collection, id: key.id, fields: deleted ? [:] : fields, isDeleted: deleted,
            version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: seconds), node: node))
    }

    func record(_ action: JournalAction, _ local: SyncRecord, basedOn base: ServerVersion?) async throws -> JournalEntry {
        try await store.transaction(for: account) { tx in
            try await tx.journal.recordLocalChange(action, local: local, at: local.version.modifiedAt, basedOn: base)
        }
    }

    /// A version of `key` with `text`, made by `node` at `seconds`.
    func version(of key: RecordKey, _ text: String, at seconds: Double, node: PeerID) -> SyncRecord {
        SyncRecord(
            collection: key.collection, id: key.id, fields: ["text": .string(text)], isDeleted: false,
            version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: seconds), node: node))
    }

    func entry() async throws -> JournalEntry? {
        try await store.transaction(for: account) { tx in try await tx.journal.entry(for: key) }
    }

    @Test("a newer action replaces the pending one but keeps its ArchCopy")
    func newerActionKeepsArchCopy() async throws {
        let base = ServerVersion(record: version(["text": "base"]), token: 7)
        let first = try await record(.modify, version(["text": "one"], at: 10, node: "device"), basedOn: base)
        let second = try await record(
            .modify, version(["text": "two"], at: 20, node: "device"), basedOn: ServerVersion(record: version(["text": "one"])))
        #expect(second.archCopy == base)
        #expect(second.sequence > first.sequence)
        #expect(second.local.fields["text"] == "two")
        #expect(second.recordedAt == Date(timeIntervalSince1970: 20))
        #expect(try await entry() == second)
    }

    @Test("entries read page by page come in key order, each once, skipping removed ones")
    func entriesInPages() async throws {
        let keys = (1...7).map { RecordKey(collection: "notes", id: RecordID("n\($0)")) }
        try await store.transaction(for: account) { tx in
            for key in keys {
                let local = version(of: key, "x", at: 1, node: "device")
                _ = try await tx.journal.recordLocalChange(.add, local: local, at: local.version.modifiedAt, basedOn: nil)
            }
            try await tx.journal.remove(keys[1])
            try await tx.journal.remove(keys[2])
        }
        var read: [RecordKey] = []
        var pages = 0
        var after: RecordKey?
        while true {
            let start = after
            let page = try await store.transaction(for: account) { tx in try await tx.journal.entries(after: start, limit: 2) }
            pages += 1
            read += page.map(\.key)
            guard page.count == 2 else { break }
            after = page.last?.key
        }
        #expect(read == [keys[0], keys[3], keys[4], keys[5], keys[6]])
        #expect(pages == 3)
    }

    @Test("answers are carried out in one transaction for the answered conflicts only, each read again")
    func carryOutAnswers() async throws {
        let keys = (1...3).map { RecordKey(collection: "notes", id: RecordID("n\($0)")) }
        try await store.transaction(for: account) { tx in
            for key in keys {
                let local = version(of: key, "mine", at: 1, node: "device")
                _ = try await tx.journal.recordLocalChange(.modify, local: local, at: local.version.modifiedAt, basedOn: nil)
                try await tx.journal.openConflict(key, remote: ServerVersion(record: version(of: key, "theirs", at: 2, node: "server")))
            }
            try await tx.journal.answer(keys[0], with: .takeTheirs)
            try await tx.journal.answer(keys[2], with: .keepMine)
        }
        let written = try await store.carryOutAnswers(for: account) { $0.key != keys[2] } with: { entry, answer, tx in
            #expect(entry.key == keys[0] && answer == .takeTheirs)
            try await tx.journal.remove(entry.key)
            return true
        }
        #expect(written == 1)
        let left = try await store.openConflicts(for: account).map(\.key)
        #expect(left == [keys[1], keys[2]])
    }

    @Test("actions on one item fold into one", arguments: [
        (JournalAction.add, JournalAction.modify, JournalAction.add), (.add, .delete, .delete),
        (.delete, .add, .modify), (.modify, .delete, .delete), (.modify, .move, .move),
    ])
    func actionsFold(first: JournalAction, then: JournalAction, expected: JournalAction) async throws {
        _ = try await record(first, version(["text": "a"], node: "device"), basedOn: nil)
        let entry = try await record(then, version(["text": "b"], node: "device"), basedOn: nil)
        #expect(entry.action == expected)
    }

    @Test("an acknowledged change leaves the journal; one changed in flight stays, based on what the server took")
    func acknowledgement() async throws {
        let sent = try await record(.add, version(["text": "one"], node: "device"), basedOn: nil)
        _ = try await record(.modify, version(["text": "two"], node: "device"), basedOn: nil)
        let took = ServerVersion(record: version(["text": "one"]), token: 42)
        let left = try await store.transaction(for: account) { tx in
            try await tx.journal.acknowledge(key, sequence: sent.sequence, holding: took)
        }
        #expect(!left)
        let pending = try #require(try await entry())
        #expect(pending.archCopy == took)
        #expect(pending.action == .add)
        #expect(pending.local.fields["text"] == "two")
        let gone = try await store.transaction(for: account) { tx in
            try await tx.journal.acknowledge(key, sequence: pending.sequence, holding: took)
        }
        #expect(gone)
        #expect(try await entry() == nil)
    }

    @Test("a server version is a conflict exactly when it moved away from the ArchCopy to something else than the local one")
    func classification() async throws {
        let base = ServerVersion(record: version(["text": "base"], at: 100))
        let entry = try await record(.modify, version(["text": "mine"], at: 5, node: "device"), basedOn: base)
        // Times do not count: the same content at any time is unchanged, or the same as local.
        #expect(entry.classify(ServerVersion(record: version(["text": "base"], at: 9_999_999))) == .unchanged)
        #expect(entry.classify(ServerVersion(record: version(["text": "mine"], at: -3_600))) == .sameAsLocal)
        #expect(entry.classify(ServerVersion(record: version(["text": "theirs"], at: 1))) == .conflict)
        #expect(entry.classify(ServerVersion(record: version([:], deleted: true))) == .conflict)
        let added = JournalEntry(
            key: key, action: .add, recordedAt: .now, local: version(["text": "new"]), archCopy: nil, sequence: 1)
        #expect(added.classify(ServerVersion(record: version(["text": "new"]))) == .sameAsLocal)
        #expect(added.classify(ServerVersion(record: version(["text": "other"]))) == .conflict)
        let deleted = JournalEntry(
            key: key, action: .delete, recordedAt: .now, local: version([:], deleted: true), archCopy: base, sequence: 1)
        #expect(deleted.classify(ServerVersion(record: version(["gone": true], deleted: true))) == .sameAsLocal)
    }

    @Test("an open conflict keeps base, local and remote until answered; a later local edit asks again")
    func conflictLifecycle() async throws {
        let base = ServerVersion(record: version(["text": "base"], at: 1), token: "e1")
        _ = try await record(.modify, version(["text": "mine"], at: 2, node: "device"), basedOn: base)
        let remote = ServerVersion(record: version(["text": "theirs"], at: 3), token: "e2")
        try await store.transaction(for: account) { tx in try await tx.journal.openConflict(key, remote: remote) }

        var conflicts = try await store.openConflicts(for: account)
        #expect(conflicts.count == 1)
        let conflict = try #require(conflicts.first)
        #expect(conflict.id == "notes/n1")
        #expect(conflict.base?.fields["text"] == "base")
        #expect(conflict.local.fields["text"] == "mine")
        #expect(conflict.remote.fields["text"] == "theirs")
        #expect(conflict.remoteToken == "e2")
        #expect(conflict.localAction == .modify)
        #expect(conflict.localTime == Date(timeIntervalSince1970: 2))
        #expect(conflict.remoteTime == Date(timeIntervalSince1970: 3))
        #expect(conflict.awaitsAnswer)
        #expect(try await entry()?.isReadyToSend == false)

        try await store.answerConflict("notes/n1", with: .merged(["text": "both of us"]), for: account)
        conflicts = try await store.openConflicts(for: account)
        #expect(conflicts.first?.answer == .merged(["text": "both of us"]))

        _ = try await record(.modify, version(["text": "mine, again"], at: 4, node: "device"), basedOn: nil)
        conflicts = try await store.openConflicts(for: account)
        #expect(conflicts.first?.answer == nil)
        #expect(conflicts.first?.local.fields["text"] == "mine, again")
        #expect(conflicts.first?.base == base.record)

        try await store.answerConflict("notes/n1", with: .keepMine, for: account)
        let rebased = try await store.transaction(for: account) { tx in try await tx.journal.rebase(key) }
        #expect(rebased?.archCopy == remote)
        #expect(rebased?.isReadyToSend == true)
        #expect(try await store.openConflicts(for: account).isEmpty)
    }

    @Test("answering a conflict that is not open is a clear error")
    func answerWithoutConflict() async throws {
        await #expect(throws: StoreError.self) {
            try await store.answerConflict("notes/n1", with: .keepMine, for: account)
        }
        _ = try await record(.modify, version(["text": "mine"], node: "device"), basedOn: nil)
        let error = await #expect(throws: StoreError.self) {
            try await store.answerConflict("notes/n1", with: .takeTheirs, for: account)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test("a write that fails leaves neither the data nor its entry")
    func atomicWithData() async throws {
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await store.transaction(for: account) { tx in
                try await tx.put(version(["text": "mine"], node: "device"))
                try await tx.journal.recordLocalChange(
                    .add, local: version(["text": "mine"], node: "device"), at: .now, basedOn: nil)
                throw Refused()
            }
        }
        #expect(try await entry() == nil)
        #expect(try await store.transaction(for: account) { tx in try await tx.record(key) } == nil)
    }

    @Test("every field of an entry survives the store")
    func storedForm() async throws {
        let base = ServerVersion(record: version(["n": 1, "when": .date(Date(timeIntervalSince1970: 1.5))]), token: ["ust": 9])
        _ = try await record(.move, version(["n": 2], at: 7, node: "device"), basedOn: base)
        let remote = ServerVersion(record: version([:], deleted: true, at: 8))
        try await store.transaction(for: account) { tx in
            try await tx.journal.openConflict(key, remote: remote)
            try await tx.journal.answer(key, with: .merged(["n": 3]))
        }
        let entry = try #require(try await entry())
        #expect(entry.action == .move)
        #expect(entry.archCopy == base)
        #expect(entry.remote == remote)
        #expect(entry.answer == .merged(["n": 3]))
        let all = try await store.transaction(for: account) { tx in try await tx.journal.entries(in: ["other"]) }
        #expect(all.isEmpty)
    }

    /// The record a stack stores for `fields`: the fields with its own sync columns `rev` and `by`.
    func stored(_ fields: [String: SyncValue], deleted: Bool = false, at seconds: Double, of key: RecordKey? = nil) -> SyncRecord {
        let key = key ?? self.key
        return SyncRecord(
            collection: key.collection, id: key.id, fields: fields.merging(["rev": .integer(Int64(seconds)), "by": "device"]) { $1 },
            isDeleted: deleted, version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: seconds), node: "device"))
    }

    /// Writes `record` and journals it as a change that names its record.
    func writeNamed(_ action: JournalAction, _ record: SyncRecord, basedOn base: ServerVersion?) async throws {
        try await store.transaction(for: account) { tx in
            try await tx.put(record)
            try await tx.journal.recordLocalChange(
                action, writtenAs: record, without: ["rev", "by"], at: record.version.modifiedAt, basedOn: base)
        }
    }

    @Test("an entry that names its record keeps no copy of the fields and reads them from the record, without the columns")
    func entryNamesItsRecord() async throws {
        let base = ServerVersion(record: version(["text": "base"]), token: 7)
        try await writeNamed(.modify, stored(["text": "one"], at: 10), basedOn: base)
        // The record is already written when the second change reads the pending entry.
        try await writeNamed(.modify, stored(["text": "two", "more": 2], at: 20), basedOn: nil)
        let pending = try #require(try await entry())
        #expect(pending.local == SyncRecord(
            collection: key.collection, id: key.id, fields: ["text": "two", "more": 2],
            version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 20), node: "device")))
        #expect(pending.archCopy == base)
        #expect(pending.action == .modify)
        let journal = try await store.transaction(for: account) { tx in
            try await tx.records(in: SyncJournal.collection, after: nil, limit: 10)
        }
        #expect(journal.count == 1)
        #expect(journal.first?.record.fields["local"] == nil)
        #expect(journal.first.map { "\($0.record.fields)".contains("two") } == false)

        // A deletion's local version is a tombstone; acknowledging leaves the record named.
        try await writeNamed(.delete, stored([:], deleted: true, at: 30), basedOn: nil)
        let deleted = try #require(try await entry())
        #expect(deleted.local.isDeleted && deleted.local.fields.isEmpty)
        let took = ServerVersion(record: version(["text": "one"]), token: 8)
        try await store.transaction(for: account) { tx in
            _ = try await tx.journal.acknowledge(key, sequence: deleted.sequence - 1, holding: took)
            try await tx.journal.openConflict(key, remote: ServerVersion(record: version(["text": "theirs"])))
        }
        let rebased = try #require(try await entry())
        #expect(rebased.archCopy == took && rebased.local == deleted.local && rebased.remote != nil)
        #expect(try await store.openConflicts(for: account).first?.local == deleted.local)
    }

    @Test("a record written since without its entry makes the entry a corrupt-store error, not a wrong local version")
    func namedRecordWrittenWithoutEntry() async throws {
        try await writeNamed(.add, stored(["text": "mine"], at: 10), basedOn: nil)
        try await store.transaction(for: account) { tx in try await tx.put(stored(["text": "server's"], at: 11)) }
        let error = await #expect(throws: StoreError.self) { try await entry() }
        #expect(error?.code == .corrupt)
    }

    @Test("scans for answers and open conflicts read no record that an entry names")
    func scansReadNoNamedRecords() async throws {
        let counting = RowCountingStore(store)
        let keys = (1...20).map { RecordKey(collection: "notes", id: RecordID("n\($0)")) }
        try await counting.transaction(for: account) { tx in
            for key in keys {
                let record = stored(["text": "mine"], at: 1, of: key)
                try await tx.put(record)
                try await tx.journal.recordLocalChange(.add, writtenAs: record, without: ["rev", "by"], at: .now, basedOn: nil)
            }
            try await tx.journal.openConflict(keys[3], remote: ServerVersion(record: version(of: keys[3], "theirs", at: 2, node: "server")))
        }
        _ = counting.reset()
        let conflicts = try await counting.openConflicts(for: account)
        #expect(conflicts.map(\.key) == [keys[3]])
        #expect(conflicts.first?.local.fields == ["text": "mine"])
        let written = try await counting.carryOutAnswers(for: account) { _ in true } with: { _, _, _ in true }
        #expect(written == 0)
        let keysRead = try await counting.transaction(for: account) { tx in try await tx.journal.pendingKeys(in: ["notes"]) }
        #expect(keysRead == keys.sorted { $0.id.rawValue < $1.id.rawValue })
        #expect(counting.counts.keys == [keys[3]])
    }

    @Test("failures fall in three classes")
    func failureClasses() {
        #expect(SyncFailureClass(of: SyncClientError(.connectionFailed, "GET /x: no answer")) == .retryLater)
        #expect(SyncFailureClass(of: SyncClientError(.serverFailed, status: 503, "GET /x: 503")) == .retryLater)
        #expect(SyncFailureClass(of: SyncClientError(.rateLimited, status: 429, "GET /x: 429")) == .retryLater)
        #expect(SyncFailureClass(of: SyncClientError(.rejected, status: 422, "POST /x: 422")) == .refused)
        #expect(SyncFailureClass(of: SyncClientError(.rejected, status: 409, "POST /x: 409")) == .conflict)
        #expect(SyncFailureClass(of: SyncClientError(.unauthorized, status: 401, "GET /x: 401")) == .retryLater)
        #expect(SyncFailureClass(of: StoreError(.storageFull, "disk full")) == .retryLater)
        #expect(SyncFailureClass(of: StoreError(.invalidArgument, "too large")) == .refused)
        #expect(SyncFailureClass(of: CancellationError()) == .retryLater)
    }
}
