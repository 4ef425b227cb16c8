import Foundation
import SyncCore
import SyncIMAP
import SyncMail
import SyncSQLite
import SyncTesting
import Testing

/// A device's notes on a mailbox, with a store of its own.
func notesDevice(_ account: IMAPAccount, _ name: String, policy: any ConflictPolicy = NewestWinsPolicy(), mailbox: String = "Notes") throws -> NotesMailbox {
    NotesMailbox(account: account, mailbox: mailbox, store: try SQLiteStore.inMemory(), device: name, policy: policy)
}

@Suite struct NotesMailboxTests {
    @Test func twoSyncsAtOnceTakeTurnsAndAppendANoteOnce() async throws {
        let account = try await TestDovecot.newAccount()
        let a = try notesDevice(account, "a")
        try await a.save(Note(title: "Once", body: "only one message"))
        async let first = a.sync()
        async let second = a.sync()
        let reports = try await [first, second]
        #expect(reports.map(\.pushed).sorted() == [0, 1], "one sync sent the note, the other found nothing to send")
        let imap = try await account.connect()
        try await imap.select("Notes")
        #expect(await imap.selected?.exists == 1)
        await imap.logout()
    }

    @Test func addEditFlagAndDeleteTravelBetweenDevices() async throws {
        let account = try await TestDovecot.newAccount()
        let a = try notesDevice(account, "a")
        let b = try notesDevice(account, "b")
        let note = Note(title: "Groceries ✓", body: "<p>eggs</p>", isHTML: true)
        try await a.save(note)
        #expect(try await a.sync().pushed == 1)
        let first = try await b.sync()
        #expect(first.pulled == 1)
        #expect(try await b.notes().map(\.title) == ["Groceries ✓"])
        #expect(try await b.note(note.id)?.body == "<p>eggs</p>")

        var edited = try #require(try await b.note(note.id))
        edited.body = "<p>eggs, milk</p>"
        edited.modified = Date()
        try await b.save(edited)
        #expect(try await b.sync().pushed == 1)
        #expect(try await a.sync().pulled == 1)
        #expect(try await a.note(note.id)?.body == "<p>eggs, milk</p>")

        // Exactly one message holds the note after the edit.
        let imap = try await account.connect()
        try await imap.select("Notes")
        #expect(await imap.selected?.exists == 1)

        // A flag set by any IMAP client reaches both devices.
        let uids = try await imap.uidSearch("ALL")
        try await imap.uidStore(IMAPSequenceSet(uids), "+FLAGS", flags: ["\\Flagged"])
        _ = try await a.sync()
        _ = try await b.sync()
        #expect(try await a.note(note.id)?.flags == ["\\Flagged"])
        #expect(try await b.note(note.id)?.flags == ["\\Flagged"])

        try await a.delete(note.id)
        _ = try await a.sync()
        _ = try await b.sync()
        #expect(try await b.notes().isEmpty)
        try await imap.select("Notes")
        #expect(await imap.selected?.exists == 0)
        await imap.logout()
    }

    @Test func anEditByAPlainIMAPClientIsPickedUp() async throws {
        let account = try await TestDovecot.newAccount()
        let a = try notesDevice(account, "a")
        let note = Note(title: "Plan", body: "v1")
        try await a.save(note)
        _ = try await a.sync()
        // Another mail program replaces the message: a new one with the same note id, the old one expunged.
        let imap = try await account.connect()
        try await imap.select("Notes")
        let old = try await imap.uidSearch("ALL")
        let message = "From: someone@example.org\r\nSubject: Plan (edited)\r\nDate: Tue, 24 Nov 2026 19:55:37 +0000\r\n"
            + "X-Universally-Unique-Identifier: \(note.id)\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Transfer-Encoding: quoted-printable\r\n\r\nv2 =C3=BCber\r\n"
        try await imap.append("Notes", message: Array(message.utf8))
        try await imap.uidStore(IMAPSequenceSet(old), "+FLAGS", flags: ["\\Deleted"])
        try await imap.uidExpunge(IMAPSequenceSet(old))
        await imap.logout()
        let report = try await a.sync()
        #expect(report.pulled >= 1)
        let notes = try await a.notes()
        #expect(notes.map(\.title) == ["Plan (edited)"])
        #expect(notes.first?.body == "v2 über")
    }

    @Test func aChangedUIDValidityResyncsInFullWithoutDuplicates() async throws {
        let account = try await TestDovecot.newAccount()
        let a = try notesDevice(account, "a")
        let b = try notesDevice(account, "b")
        for title in ["one", "two", "three"] { try await a.save(Note(title: title, body: title)) }
        _ = try await a.sync()
        _ = try await b.sync()
        #expect(try await b.notes().count == 3)
        // The server loses the mailbox and gets it back with new UIDs (a restore): same notes, new UIDVALIDITY.
        let imap = try await account.connect()
        try await imap.select("Notes")
        let fetched = try await imap.uidFetch(IMAPSequenceSet([1...UInt32.max]), items: "(BODY.PEEK[])")
        try await imap.select("INBOX")
        try await imap.delete("Notes")
        try await imap.create("Notes")
        for fetch in fetched.fetches where NoteMessage.decode(fetch.body ?? [])?.note.title != "one" {
            try await imap.append("Notes", message: try #require(fetch.body))
        }
        try await imap.append("Notes", message: NoteMessage.encode(Note(title: "four", body: "4"), from: "x", device: "other"))
        await imap.logout()
        let report = try await b.sync()
        #expect(report.fullResync)
        let titles = try await b.notes().map(\.title)
        #expect(titles.sorted() == ["four", "three", "two"])
    }

    @Test(arguments: ["newest wins", "keep both"])
    func aNoteEditedOnTwoDevicesOfflineEndsAsThePolicySays(policyName: String) async throws {
        let policy: any ConflictPolicy = policyName == "keep both" ? KeepBothPolicy() : NewestWinsPolicy()
        let account = try await TestDovecot.newAccount()
        let a = try notesDevice(account, "a", policy: policy)
        let b = try notesDevice(account, "b", policy: policy)
        try await editOnBothDevices(a, b, aAt: Date(timeIntervalSince1970: 1_700_000_100), bAt: Date(timeIntervalSince1970: 1_700_000_200))
        _ = try await a.sync()
        let report = try await b.sync()
        #expect(report.conflicts == 1)
        _ = try await a.sync()
        _ = try await b.sync()
        let bodiesA = try await a.notes().map(\.body).sorted()
        let bodiesB = try await b.notes().map(\.body).sorted()
        #expect(bodiesA == bodiesB)
        if policyName == "keep both" {
            #expect(bodiesA == ["from A", "from B"])
        } else {
            #expect(bodiesA == ["from B"])
        }
        // The server holds one message per note, no more.
        #expect(try await messagesOnServer(account) == UInt32(bodiesA.count))
    }

    @Test(arguments: [ConflictAnswer.keepMine, .takeTheirs, .keepBoth])
    func anAskedConflictIsCarriedOutByTheNextSyncAsAnswered(answer: ConflictAnswer) async throws {
        let account = try await TestDovecot.newAccount()
        let a = try notesDevice(account, "a")
        let b = try notesDevice(account, "b", policy: .askUser)
        let note = try await editOnBothDevices(a, b)
        _ = try await a.sync()
        let asked = try await b.sync()
        #expect(asked.conflicts == 1 && asked.openConflicts == 1)
        #expect(try await b.note(note.id)?.body == "from B", "an open conflict leaves the device's note as it is")
        let open = try #require(try await b.openConflicts().first)
        #expect(open.remote.fields["body"] == "from A" && open.local.fields["body"] == "from B")

        try await b.store.answerConflict(open.id, with: answer, for: b.storeAccount)
        let carried = try await b.sync()
        #expect(carried.openConflicts == 0)
        _ = try await a.sync()
        let bodiesA = try await a.notes().map(\.body).sorted()
        let bodiesB = try await b.notes().map(\.body).sorted()
        #expect(bodiesA == bodiesB, "both devices end with the same notes")
        switch answer {
        case .keepMine: #expect(bodiesB == ["from B"])
        case .takeTheirs: #expect(bodiesB == ["from A"])
        default: #expect(bodiesB == ["from A", "from B"])
        }
        #expect(try await messagesOnServer(account) == UInt32(bodiesB.count), "one message per note")
    }

    /// A note saved on `a` and synced to both devices, then edited offline on each: "from A" on `a`,
    /// "from B" on `b`, written at `aAt` and `bAt` when given. Returns the note as first saved.
    @discardableResult
    private func editOnBothDevices(_ a: NotesMailbox, _ b: NotesMailbox, aAt: Date? = nil, bAt: Date? = nil) async throws -> Note {
        let note = Note(title: "Trip", body: "base", created: Date(timeIntervalSince1970: 1_700_000_000))
        try await a.save(note)
        _ = try await a.sync()
        _ = try await b.sync()
        for (device, body, time) in [(a, "from A", aAt), (b, "from B", bAt)] {
            var edited = note
            edited.body = body
            if let time { edited.modified = time }
            try await device.save(edited)
        }
        return note
    }

    /// How many messages the account's Notes mailbox holds on the server.
    private func messagesOnServer(_ account: IMAPAccount) async throws -> UInt32? {
        let imap = try await account.connect()
        try await imap.select("Notes")
        let count = await imap.selected?.exists
        await imap.logout()
        return count
    }

    @Test func aServerThatCannotBeReachedIsTriedAgainAsTheRetryPolicySaysThenReported() async throws {
        let closed = IMAPAccount(host: "127.0.0.1", port: 1, user: "x", password: "y", security: .none)
        let sleeper = TestClock()
        let notes = NotesMailbox(
            account: closed, store: try SQLiteStore.inMemory(), device: "a",
            retry: RetryPolicy(maxAttempts: 3, initialDelay: .seconds(1), jitter: 0, maxElapsed: nil), sleeper: sleeper)
        try await notes.save(Note(title: "Offline", body: "kept"))
        let sync = Task { try await notes.sync() }
        // Attempt one fails, the mailbox waits 1 s; attempt two fails, it waits 2 s; attempt three is the last.
        for wait in [Duration.seconds(1), .seconds(2)] {
            await sleeper.waitForSleepers(1)
            sleeper.advance(by: wait)
        }
        await #expect { try await sync.value } throws: { error in
            (error as? IMAPError)?.code == .connectionFailed
        }
        #expect(sleeper.now.offset == .seconds(3), "two waits, as the policy says")
        #expect(try await notes.notes().map(\.title) == ["Offline"], "the local change is kept")
        let pending = try await notes.store.transaction(for: notes.storeAccount) { tx in try await tx.journal.entries() }
        #expect(pending.count == 1)
    }

    @Test func messageFormatReadsBack() throws {
        let note = Note(id: "6F1C", title: "Ünïcode title", body: "line 1\nline 2", isHTML: false, created: Date(timeIntervalSince1970: 1_700_000_000.123))
        let message = NoteMessage.encode(note, from: "ada@example.org", device: "phone")
        let text = String(decoding: message, as: UTF8.self)
        #expect(text.contains("X-Uniform-Type-Identifier: com.apple.mail-note\r\n"))
        #expect(text.contains("Date: Tue, 14 Nov 2023 22:13:20 +0000\r\n"))
        let decoded = try #require(NoteMessage.decode(message))
        #expect(decoded.note.title == note.title && decoded.note.body == note.body && decoded.device == "phone")
        #expect(decoded.note.modified == Date(timeIntervalSince1970: 1_700_000_000.123))
        #expect(NoteMessage.decode(Array("Subject: no id\r\n\r\nbody".utf8)) == nil)
    }

    @Test func lineBreaksAreCRLFInMailAndLFInNotes() throws {
        // A plain client's message, sent as is: CRLF line breaks, and the message's final one.
        let plain = "X-Universally-Unique-Identifier: 9C1D\r\nSubject: list\r\n\r\neggs\r\nmilk\r\n"
        #expect(try #require(NoteMessage.decode(Array(plain.utf8))).note.body == "eggs\nmilk")
        // The same in quoted-printable, and in base64 of CRLF text (MIME's canonical form).
        let quoted = "X-Universally-Unique-Identifier: 9C1E\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\neggs\r\nmilk\r\n"
        #expect(try #require(NoteMessage.decode(Array(quoted.utf8))).note.body == "eggs\nmilk")
        let base64 = "X-Universally-Unique-Identifier: 9C1F\r\nContent-Transfer-Encoding: base64\r\n\r\n"
            + Data("eggs\r\nmilk\r\n".utf8).base64EncodedString() + "\r\n"
        #expect(try #require(NoteMessage.decode(Array(base64.utf8))).note.body == "eggs\nmilk\n")
        // Anchorage writes the canonical form, and a note's text comes back exactly, a final line break included.
        let note = Note(id: "9C20", title: "t", body: "a\nb\n", isHTML: false)
        let message = String(decoding: NoteMessage.encode(note, from: "x", device: "d"), as: UTF8.self)
        let body = try #require(message.components(separatedBy: "\r\n\r\n").last?.replacingOccurrences(of: "\r\n", with: ""))
        #expect(Data(base64Encoded: body).map { String(decoding: $0, as: UTF8.self) } == "a\r\nb\r\n")
        #expect(try #require(NoteMessage.decode(NoteMessage.encode(note, from: "x", device: "d"))).note.body == "a\nb\n")
    }

    @Test func datesOutOfRangeAreNeitherTrustedNorFatal() throws {
        // Headers any IMAP client can write: counts and years no calendar date has.
        let message = [
            "X-Universally-Unique-Identifier: 7A2D", "X-Anchorage-Modified: 9223372036854775807",
            "X-Anchorage-Created: -9223372036854775808", "Date: Mon, 1 Jan 99999999999999 00:00:00 +0000",
            "X-Mail-Created-Date: 31 Dec 2025 25:61:00 +9999999", "", "body",
        ].joined(separator: "\r\n")
        let decoded = try #require(NoteMessage.decode(Array(message.utf8)))
        #expect(decoded.note.modified == Date(timeIntervalSince1970: 0), "no date to trust: the epoch")
        #expect(decoded.note.created == decoded.note.modified)

        // A note the application dated far beyond year 9999 is written as the last moment of it.
        let far = Note(id: "7A2E", title: "far", body: "", isHTML: false, created: Date(timeIntervalSince1970: 1e300))
        var farNote = far
        farNote.modified = Date(timeIntervalSince1970: -1e300)
        let text = String(decoding: NoteMessage.encode(farNote, from: "ada@example.org", device: "phone"), as: UTF8.self)
        #expect(text.contains("X-Anchorage-Created: 253402300799999\r\n"))
        #expect(text.contains("X-Mail-Created-Date: Fri, 31 Dec 9999 23:59:59 +0000\r\n"))
        #expect(text.contains("X-Anchorage-Modified: -62135596800000\r\n"))
        let again = try #require(NoteMessage.decode(NoteMessage.encode(farNote, from: "ada@example.org", device: "phone")))
        #expect(again.note.created == Date(timeIntervalSince1970: 253_402_300_799.999))
    }
}

/// Keeps both versions of a conflicting note.
struct KeepBothPolicy: ConflictPolicy {
    func resolve(_ conflict: Conflict) async -> Resolution { .keepBoth }
}
