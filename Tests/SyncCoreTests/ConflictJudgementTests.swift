import Foundation
import SyncCore
import SyncTesting
import Synchronization
import Testing

/// The journal's rules 4 to 6 (docs/journal.md), tested once against the shared API that every stack
/// uses: `SyncJournal.take(_:pending:policy:writer:)` and `carryOut(_:of:writer:)`. Each stack's tests
/// then check only its writer.
@Suite("Conflicts: judged and carried out in one place")
struct ConflictJudgementTests {
    let store = MemoryStore()
    let account: AccountID = "device"
    let key = RecordKey(collection: "notes", id: "n1")
    let clock = TestClock(wallTime: Date(timeIntervalSince1970: 1_000))
    var writer: RecordConflictWriter { RecordConflictWriter(node: "device", clock: clock.wall) }

    func version(_ text: String?, at seconds: Double, node: PeerID = "server") -> SyncRecord {
        SyncRecord(
            collection: key.collection, id: key.id, fields: text.map { ["text": .string($0)] } ?? [:], isDeleted: text == nil,
            version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: seconds), node: node))
    }

    func server(_ text: String?, at seconds: Double, token: Int64) -> ServerVersion {
        ServerVersion(record: version(text, at: seconds), token: .integer(token))
    }

    /// The device holds "base" from the server (token 1) and changed it to `local`.
    func pending(_ local: String?) async throws -> JournalEntry {
        try await store.transaction(for: account) { tx in
            let mine = version(local, at: 500, node: "device")
            try await tx.put(mine)
            return try await tx.journal.recordLocalChange(
                local == nil ? .delete : .modify, local: mine, at: mine.version.modifiedAt, basedOn: server("base", at: 100, token: 1))
        }
    }

    func take(_ incoming: ServerVersion, policy: any ConflictPolicy) async throws -> ServerVersionOutcome {
        let writer = writer
        return try await store.transaction(for: account) { [key] tx in
            let entry = try #require(try await tx.journal.entry(for: key))
            return try await tx.journal.take(incoming, pending: entry, policy: policy, writer: writer)
        }
    }

    func entry(_ key: RecordKey? = nil) async throws -> JournalEntry? {
        try await store.transaction(for: account) { [k = key ?? self.key] tx in try await tx.journal.entry(for: k) }
    }

    func stored() async throws -> [SyncRecord] {
        try await store.transaction(for: account) { [collection = key.collection] tx in
            try await tx.records(in: collection, after: nil, limit: 100).map(\.record)
        }
    }

    @Test("the server still holds the ArchCopy: nothing is written and the change goes up")
    func unchanged() async throws {
        let before = try await pending("mine")
        #expect(try await take(server("base", at: 100, token: 1), policy: .serverWins) == .unchanged)
        #expect(try await entry() == before)
        #expect(try await stored().map(\.fields) == [["text": "mine"]])
    }

    @Test("the ArchCopy's content under a newer token: nothing is written, and the change is based on the newer token")
    func unchangedUnderANewName() async throws {
        let before = try await pending("mine")
        let renamed = server("base", at: 300, token: 5)
        #expect(try await take(renamed, policy: .serverWins) == .unchanged)
        let after = try #require(try await entry())
        #expect(after.archCopy == renamed && after.sequence == before.sequence && after.local == before.local)
        #expect(try await stored().map(\.fields) == [["text": "mine"]])
    }

    @Test("the server already holds the device's version: the entry leaves and the server's version is kept")
    func sameAsLocal() async throws {
        _ = try await pending("mine")
        let outcome = try await take(server("mine", at: 600, token: 2), policy: .askUser)
        #expect(outcome == .agreed)
        #expect(!outcome.isConflict && outcome.wroteServerVersion)
        #expect(try await entry() == nil)
        #expect(try await stored() == [version("mine", at: 600)])
    }

    @Test("mine: the change is based on the server's version and stamped after it")
    func keepMine() async throws {
        _ = try await pending("mine")
        let theirs = server("theirs", at: 2_000, token: 2)
        #expect(try await take(theirs, policy: .clientWins) == .decided(.keepMine, carriedOut: true))
        let entry = try #require(try await entry())
        #expect(entry.archCopy == theirs && entry.remote == nil && entry.isReadyToSend)
        #expect(entry.local.fields == ["text": "mine"])
        let record = try #require(try await stored().first)
        #expect(record.fields == ["text": "mine"] && record.version.node == "device")
        #expect(record.version.modifiedAt > theirs.record.version.modifiedAt)
    }

    @Test("theirs: the server's version replaces the local one and the entry leaves")
    func takeTheirs() async throws {
        _ = try await pending("mine")
        let outcome = try await take(server("theirs", at: 600, token: 2), policy: .serverWins)
        #expect(outcome == .decided(.takeTheirs, carriedOut: true) && outcome.wroteServerVersion)
        #expect(try await entry() == nil)
        #expect(try await stored() == [version("theirs", at: 600)])
    }

    @Test("both: the server's version under the id, the local one as a new item that goes up as an add")
    func keepBoth() async throws {
        _ = try await pending("mine")
        let policy = DeferredPolicy { _ in .keepBoth }
        #expect(try await take(server("theirs", at: 600, token: 2), policy: policy) == .decided(.keepBoth, carriedOut: true))
        #expect(try await entry() == nil)
        let records = try await stored()
        #expect(records.count == 2)
        #expect(records.contains(version("theirs", at: 600)))
        let copy = try #require(records.first { $0.id != key.id })
        #expect(copy.fields == ["text": "mine"])
        let added = try #require(try await entry(copy.key))
        #expect(added.action == .add && added.archCopy == nil)
    }

    @Test("both, after a local deletion: only the server's version is kept")
    func keepBothOfADeletion() async throws {
        _ = try await pending(nil)
        let policy = DeferredPolicy { _ in .keepBoth }
        #expect(try await take(server("theirs", at: 600, token: 2), policy: policy) == .decided(.keepBoth, carriedOut: true))
        #expect(try await stored() == [version("theirs", at: 600)])
    }

    @Test("merged: the fields are written as a change of the server's version; the policy sees base, local and remote")
    func merged() async throws {
        _ = try await pending("mine")
        let seen = Mutex<Conflict?>(nil)
        let policy = DeferredPolicy { conflict in
            seen.withLock { $0 = conflict }
            var record = conflict.local
            record.fields = ["text": "mine+theirs"]
            return .merged(record)
        }
        let theirs = server("theirs", at: 600, token: 2)
        #expect(try await take(theirs, policy: policy) == .decided(.merged(["text": "mine+theirs"]), carriedOut: true))
        let conflict = try #require(seen.withLock { $0 })
        #expect(conflict.base?.fields == ["text": "base"] && conflict.local.fields == ["text": "mine"])
        #expect(conflict.remote == theirs.record && conflict.resolvingSide == .client)
        let entry = try #require(try await entry())
        #expect(entry.archCopy == theirs && entry.local.fields == ["text": "mine+theirs"] && entry.action == .modify)
    }

    @Test("ask: the conflict stays open; the same version leaves it, a newer one replaces it and drops the answer")
    func deferred() async throws {
        _ = try await pending("mine")
        let first = server("theirs", at: 600, token: 2)
        #expect(try await take(first, policy: .askUser) == .opened)
        #expect(try await entry()?.remote == first)
        #expect(try await stored().map(\.fields) == [["text": "mine"]])
        #expect(try await take(first, policy: .askUser) == .stillOpen)
        try await store.answerConflict(key.description, with: .takeTheirs, for: account)
        let newer = server("newer", at: 700, token: 3)
        #expect(try await take(newer, policy: .askUser) == .opened)
        let open = try #require(try await entry())
        #expect(open.remote == newer && open.answer == nil && !open.isReadyToSend)
    }

    @Test("an answer is carried out by the next sync through the same writer")
    func answerCarriedOut() async throws {
        _ = try await pending("mine")
        _ = try await take(server("theirs", at: 600, token: 2), policy: .askUser)
        try await store.answerConflict(key.description, with: .takeTheirs, for: account)
        let writer = writer
        let written = try await store.carryOutAnswers(for: account, where: { _ in true }, writer: { _ in writer })
        #expect(written == 1)
        #expect(try await entry() == nil)
        #expect(try await stored() == [version("theirs", at: 600)])
        #expect(try await store.openConflicts(for: account).isEmpty)
    }

    @Test("a writer that cannot keep both leaves the conflict open for another answer")
    func cannotKeepBoth() async throws {
        struct SingleHolder: ConflictWriter {
            var base: RecordConflictWriter
            func writeServerVersion(_ remote: ServerVersion, over entry: JournalEntry, in tx: any StoreTransaction) async throws {
                try await base.writeServerVersion(remote, over: entry, in: tx)
            }
            func writeLocalVersion(_ version: SyncRecord, merged: Bool, over remote: ServerVersion, in tx: any StoreTransaction) async throws {
                try await base.writeLocalVersion(version, merged: merged, over: remote, in: tx)
            }
            func writeCopy(of local: SyncRecord, in tx: any StoreTransaction) async throws {
                try await base.writeCopy(of: local, in: tx)
            }
            func canKeepBoth(_ entry: JournalEntry, and remote: ServerVersion, in tx: any StoreTransaction) async throws -> Bool { false }
        }
        _ = try await pending("mine")
        _ = try await take(server("theirs", at: 600, token: 2), policy: .askUser)
        try await store.answerConflict(key.description, with: .keepBoth, for: account)
        let writer = SingleHolder(base: writer)
        #expect(try await store.carryOutAnswers(for: account, where: { _ in true }, writer: { _ in writer }) == 0)
        let open = try #require(try await entry())
        #expect(open.awaitsAnswer)
        #expect(try await stored().map(\.fields) == [["text": "mine"]])
    }
}
