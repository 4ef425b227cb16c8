import Foundation
import SyncPush
import SyncIMAP
import Testing

@Suite struct IMAPConnectionTests {
    @Test func commandsAgainstDovecot() async throws {
        let account = try await TestDovecot.newAccount()
        let imap = try await account.connect()
        let capabilities = await imap.capabilities
        #expect(capabilities.contains("QRESYNC") && capabilities.contains("METADATA") && capabilities.contains("LITERAL+"))
        try await imap.create("Notes")
        try await imap.create("Entwürfe")
        let listing = try await imap.list(status: ["UIDVALIDITY", "HIGHESTMODSEQ", "MESSAGES"])
        #expect(Set(listing.map(\.entry.name)).isSuperset(of: ["INBOX", "Notes", "Entwürfe"]))
        #expect(listing.first(where: { $0.entry.name == "Notes" })?.status["MESSAGES"] == 0)

        // A literal with a line break and non-ASCII bytes, sent as {n+}.
        let message = Array("Subject: one\r\n\r\nline 1\r\nzwölf\r\n".utf8)
        let appended = try #require(try await imap.append("Notes", flags: ["\\Seen"], message: message))
        try await imap.append("Notes", message: Array("Subject: two\r\n\r\n2\r\n".utf8))
        try await imap.select("Notes")
        let selected = try #require(await imap.selected)
        #expect(selected.uidValidity == appended.uidValidity && selected.exists == 2)
        let modSeq = try #require(selected.highestModSeq)
        let fetched = try await imap.uidFetch(IMAPSequenceSet([1...UInt32.max]), items: "(UID FLAGS MODSEQ BODY.PEEK[])")
        #expect(fetched.fetches.count == 2)
        #expect(fetched.fetches.first { $0.uid == appended.uid }?.body == message)

        try await imap.uidStore(IMAPSequenceSet([appended.uid]), "+FLAGS", flags: ["\\Flagged", "$Pinned"])
        let changed = try await imap.uidFetch(IMAPSequenceSet([1...UInt32.max]), items: "(FLAGS)", changedSince: modSeq, vanished: true)
        #expect(changed.fetches.map(\.uid) == [appended.uid])
        let flags = Set(changed.fetches.first?.flags ?? [])
        #expect(flags.isSuperset(of: ["\\Flagged", "$Pinned", "\\Seen"]))
        #expect(try await imap.uidSearch("KEYWORD $Pinned") == [appended.uid])

        try await imap.uidStore(IMAPSequenceSet([appended.uid]), "+FLAGS", flags: ["\\Deleted"])
        try await imap.uidExpunge(IMAPSequenceSet([appended.uid]))
        let gone = try await imap.uidFetch(IMAPSequenceSet([1...UInt32.max]), items: "(FLAGS)", changedSince: modSeq, vanished: true)
        #expect(gone.vanished.contains(appended.uid))

        // Reselecting with QRESYNC reports what vanished since.
        try await imap.select("INBOX")
        let resync = try await imap.select("Notes", qresync: (appended.uidValidity, modSeq, IMAPSequenceSet([1...appended.uid])))
        #expect(resync.vanished.contains(appended.uid))
        #expect((await imap.selected?.highestModSeq ?? 0) > modSeq)

        try await imap.setMetadata("Notes", ["/private/vendor/vendor.anchorage/push/dev-1": "account=ada token=t1", "/private/comment": "a \"quoted\"\nline"])
        let metadata = try await imap.getMetadata("Notes", ["/private/vendor/vendor.anchorage/push", "/private/comment"])
        #expect(metadata["/private/vendor/vendor.anchorage/push/dev-1"] == "account=ada token=t1")
        #expect(metadata["/private/comment"] == "a \"quoted\"\nline")
        try await imap.setMetadata("Notes", ["/private/comment": nil])
        #expect(try await imap.getMetadata("Notes", ["/private/comment"]).isEmpty)

        await #expect(throws: IMAPError.self) { try await imap.select("No such mailbox") }
        await imap.logout()
        await #expect(throws: IMAPError.self) { try await imap.capability() }
    }

    @Test func idleHearsAnotherConnectionsAppend() async throws {
        let account = try await TestDovecot.newAccount()
        let watcher = try await account.connect()
        let writer = try await account.connect()
        try await watcher.create("Notes")
        try await watcher.select("Notes")
        async let heard = watcher.idle(for: .seconds(20)) { response in
            if case .exists(let count) = response { return count >= 1 }
            return false
        }
        try await writer.append("Notes", message: Array("Subject: x\r\n\r\nx\r\n".utf8))
        let responses = try await heard
        #expect(responses.contains(.exists(1)))
        #expect(await watcher.selected?.exists == 1)
        await watcher.logout()
        await writer.logout()
    }

    @Test func startTLSWithTheServersCertificate() async throws {
        let plain = try await TestDovecot.newAccount()
        let account = IMAPAccount(host: plain.host, port: plain.port, user: plain.user, password: plain.password, security: .startTLS)
        let certificate = try await TestDovecot.certificateFile()
        let imap = try await account.connect(configuration: .init(tls: PushClient.tls(trustingPEMFile: certificate)))
        #expect(await imap.isSecure)
        #expect(await imap.capabilities.contains("QRESYNC"))
        try await imap.create("Notes")
        #expect(try await imap.append("Notes", message: Array("Subject: over TLS\r\n\r\nx\r\n".utf8)) != nil)
        await imap.logout()

        // A certificate nobody vouched for is refused, not used.
        await #expect(throws: IMAPError.self) { try await account.connect() }
    }

    @Test func wrongPasswordAndClosedPortAreClearErrors() async throws {
        var account = try await TestDovecot.newAccount()
        account.password = "wrong"
        await #expect { try await account.connect() } throws: { error in
            (error as? IMAPError)?.code == .authenticationFailed
                && "\(error)" == "the IMAP server refused user \(account.user)'s password"
        }
        let closed = IMAPAccount(host: "127.0.0.1", port: 1, user: "x", password: "y", security: .none)
        await #expect { try await closed.connect() } throws: { error in
            (error as? IMAPError)?.code == .connectionFailed && "\(error)" == "cannot connect to 127.0.0.1:1: connection refused"
        }
        // The code matches in a catch clause.
        do {
            _ = try await closed.connect()
            Issue.record("connected to a closed port")
        } catch IMAPError.Code.connectionFailed {
        }
    }
}
