@testable import FileSync
import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// File sync's part of the shared conflict API: what ``FileConflictWriter`` leaves in the folder, the
/// cache and the journal for each decision the journal carries out. The journal's rules themselves are
/// tested once, in ConflictJudgementTests; the transfers that follow, against Apache, in SeedRowTests.
@Suite("FileConflictWriter: decisions written to the folder, the cache and the journal")
struct FileConflictWriterTests {
    /// A device whose `a.txt` changed since it had version `"E0"` from the server, and a server version `"E1"`.
    struct Device {
        let temporary: TemporaryFolder
        let local: LocalFolder
        let store = MemoryStore()
        let clock = TestClock(wallTime: Date(timeIntervalSince1970: 1_800_000_000)).wall
        let key = FolderSync.key("a.txt")

        init(deleted: Bool = false) async throws {
            temporary = try TemporaryFolder("file-conflicts")
            local = LocalFolder(root: temporary.path("folder"))
            try local.makeDirectory("")
            let known = CachedItem(WebDAVItem(path: "a.txt", isDirectory: false, etag: "\"E0\"", size: 3), local: nil)
            if !deleted { try Data("mine!".utf8).write(to: URL(fileURLWithPath: local.absolute("a.txt"))) }
            let item = local.item("a.txt")
            let now = clock.now()
            try await store.transaction(for: "ada") { tx in
                try await Cache(tx).put(known)
                let record = FolderSync.localRecord("a.txt", item, from: nil, at: now)
                try await tx.journal.recordLocalChange(
                    deleted ? .delete : .modify, local: deleted ? record.tombstone(version: FolderSync.version(now)) : record,
                    at: now, basedOn: known.version)
            }
        }

        var writer: FileConflictWriter { FileConflictWriter(local: local, clock: clock, copyPath: "a (conflict).txt") }

        /// The server's version `"E1"` with a question of `kind`.
        func incoming(_ kind: FileQuestion.Kind) -> ServerVersion {
            var fields: [String: SyncValue] = ["directory": .bool(false), "etag": .string("\"E1\""), "size": .integer(6)]
            let question = FileQuestion(kind: kind, path: "a.txt", localTime: clock.now(), serverTime: clock.now(), choices: [:])
            fields.merge(question.fields) { _, new in new }
            return ServerVersion(
                record: SyncRecord(collection: FolderSync.collection, id: "a.txt", fields: fields, version: FolderSync.version(clock.now())),
                token: fields["etag"])
        }

        func take(_ kind: FileQuestion.Kind, policy: FolderSync.ConflictPolicy) async throws -> ServerVersionOutcome {
            let incoming = incoming(kind)
            let writer = writer
            return try await store.transaction(for: "ada") { [key] tx in
                let entry = try #require(try await tx.journal.entry(for: key))
                return try await tx.journal.take(incoming, pending: entry, policy: policy, writer: writer)
            }
        }

        func carryOut(_ answer: ConflictAnswer) async throws -> Bool {
            let writer = writer
            return try await store.transaction(for: "ada") { [key] tx in
                let entry = try #require(try await tx.journal.entry(for: key))
                return try await tx.journal.carryOut(answer, of: entry, writer: writer)
            }
        }

        func entry(_ path: String) async throws -> JournalEntry? {
            try await store.transaction(for: "ada") { tx in try await tx.journal.entry(for: FolderSync.key(path)) }
        }

        func cached(_ path: String) async throws -> CachedItem? {
            try await store.transaction(for: "ada") { tx in try await Cache(tx).item(path) }
        }

        func read(_ path: String) -> String? { try? String(contentsOfFile: local.absolute(path), encoding: .utf8) }
    }

    @Test("keep both (the policy's answer to two versions): the local copy moves to its copy's name as a new file")
    func keepBoth() async throws {
        let device = try await Device()
        let outcome = try await device.take(.changedOnBoth, policy: .keepBoth)
        #expect(outcome == .decided(.keepBoth, carriedOut: true))
        #expect(device.read("a (conflict).txt") == "mine!")
        #expect(device.read("a.txt") == nil)
        #expect(try await device.entry("a.txt") == nil)
        #expect(try await device.entry("a (conflict).txt")?.action == .add)
        // Nothing cached under the name: the mirror pass downloads the server's version there.
        #expect(try await device.cached("a.txt") == nil)
    }

    @Test("ask the user: the question opens, and nothing in the folder or the cache changes")
    func askUser() async throws {
        let device = try await Device()
        let outcome = try await device.take(.changedOnBoth, policy: .askUser)
        #expect(outcome == .opened)
        let entry = try #require(try await device.entry("a.txt"))
        #expect(entry.awaitsAnswer && entry.remote?.etag == "\"E1\"")
        #expect(device.read("a.txt") == "mine!")
        #expect(try await device.cached("a.txt")?.etag == "\"E0\"")
    }

    @Test("theirs: the entry goes; the cache says the device holds E0 as the copy is now, so the mirror pass replaces it")
    func theirs() async throws {
        let device = try await Device()
        _ = try await device.take(.changedOnBoth, policy: .askUser)
        #expect(try await device.carryOut(.takeTheirs))
        #expect(try await device.entry("a.txt") == nil)
        let cached = try #require(try await device.cached("a.txt"))
        let item = try #require(device.local.item("a.txt"))
        #expect(cached.etag == "\"E0\"" && cached.sameLocal(item))
        #expect(device.read("a.txt") == "mine!")  // replaced by the download that follows, not by the writer
    }

    @Test("mine: the change stays, based on the server's version, and the file is untouched")
    func mine() async throws {
        let device = try await Device()
        _ = try await device.take(.changedOnBoth, policy: .askUser)
        #expect(try await device.carryOut(.keepMine))
        let entry = try #require(try await device.entry("a.txt"))
        #expect(entry.action == .modify && entry.isReadyToSend && entry.archCopy?.etag == "\"E1\"")
        #expect(device.read("a.txt") == "mine!")
    }

    @Test("a delete met by a changed server version: keep both restores it as theirs, the cache forgets the item")
    func deleteTheirs() async throws {
        let device = try await Device(deleted: true)
        let outcome = try await device.take(.deleteChangedOnServer, policy: .keepBoth)
        #expect(outcome == .decided(.takeTheirs, carriedOut: true))
        #expect(try await device.entry("a.txt") == nil)
        #expect(try await device.cached("a.txt") == nil)
    }
}
