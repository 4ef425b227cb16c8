import SyncIMAP
import Testing

/// Frames and parses a transcript of server lines (each "\r\n"-terminated, literals inline).
func parseTranscript(_ text: String, limits: IMAPResponseFramer.Limits = .init()) throws -> [IMAPResponse] {
    var framer = IMAPResponseFramer(limits: limits)
    framer.append(Array(text.utf8))
    var responses: [IMAPResponse] = []
    while let unit = try framer.next() { responses.append(try IMAPParser.parse(unit)) }
    #expect(framer.bufferedBytes == 0, "bytes left over after the transcript")
    return responses
}

/// Lines joined with CRLF, the way a server sends them.
func crlf(_ lines: String) -> String {
    lines.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
}

@Suite struct IMAPParserTests {
    @Test func qresyncSelectTranscript() throws {
        let responses = try parseTranscript(crlf("""
            * FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)
            * OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft \\*)] Flags permitted.
            * 3 EXISTS
            * 0 RECENT
            * OK [UNSEEN 3] First unseen.
            * OK [UIDVALIDITY 1795465366] UIDs valid
            * OK [UIDNEXT 5] Predicted next UID
            * OK [HIGHESTMODSEQ 8] Highest
            * VANISHED (EARLIER) 1
            * 1 FETCH (UID 2 FLAGS (\\Flagged \\Seen) MODSEQ (6))
            A3 OK [READ-WRITE] Select completed (0.001 + 0.000 secs).

            """))
        #expect(responses.count == 11)
        #expect(responses[0] == .untagged(.flags(["\\Answered", "\\Flagged", "\\Deleted", "\\Seen", "\\Draft"])))
        #expect(responses[1] == .untagged(.condition(.ok, .permanentFlags(["\\Answered", "\\Flagged", "\\Deleted", "\\Seen", "\\Draft", "\\*"]), "Flags permitted.")))
        #expect(responses[2] == .untagged(.exists(3)))
        #expect(responses[3] == .untagged(.recent(0)))
        #expect(responses[4] == .untagged(.condition(.ok, .other("UNSEEN", "3"), "First unseen.")))
        #expect(responses[5] == .untagged(.condition(.ok, .uidValidity(1_795_465_366), "UIDs valid")))
        #expect(responses[6] == .untagged(.condition(.ok, .uidNext(5), "Predicted next UID")))
        #expect(responses[7] == .untagged(.condition(.ok, .highestModSeq(8), "Highest")))
        #expect(responses[8] == .untagged(.vanished(earlier: true, IMAPSequenceSet([1...1]))))
        var fetch = IMAPFetch(sequence: 1)
        fetch.uid = 2
        fetch.flags = ["\\Flagged", "\\Seen"]
        fetch.modSeq = 6
        #expect(responses[9] == .untagged(.fetch(fetch)))
        #expect(responses[10] == .tagged(tag: "A3", status: .ok, code: .readWrite, text: "Select completed (0.001 + 0.000 secs)."))
    }

    @Test func fetchWithBodyLiteralAndItemsInAnyOrder() throws {
        let body = "From: bob@example.org\r\nSubject: 4\r\n\r\nnote body 4\r\n"
        let responses = try parseTranscript(
            "* 3 FETCH (UID 4 FLAGS () MODSEQ (5) BODY[] {\(body.utf8.count)}\r\n\(body))\r\n"
                + "* 4 FETCH (UID 3 MODSEQ (10) FLAGS (\\Seen $Pinned))\r\n* 5 FETCH (MODSEQ (6) UID 2 FLAGS ())\r\nA4 OK Fetch completed\r\n")
        guard case .untagged(.fetch(let first)) = responses[0] else { Issue.record("not a FETCH: \(responses[0])"); return }
        #expect(first.uid == 4 && first.flags == [] && first.modSeq == 5)
        #expect(first.body == Array(body.utf8))
        guard case .untagged(.fetch(let second)) = responses[1], case .untagged(.fetch(let third)) = responses[2] else {
            Issue.record("not FETCHes"); return
        }
        #expect(second.uid == 3 && second.modSeq == 10 && second.flags == ["\\Seen", "$Pinned"])
        #expect(third.uid == 2 && third.modSeq == 6)
    }

    @Test func changedSinceAndSearchTranscript() throws {
        let responses = try parseTranscript(crlf("""
            * VANISHED (EARLIER) 1
            * 1 FETCH (UID 2 FLAGS (\\Flagged \\Seen) MODSEQ (6))
            * 3 FETCH (UID 4 FLAGS () MODSEQ (5))
            A5 OK Fetch completed
            * SEARCH 2 4 (MODSEQ 6)
            A6 OK Search completed
            * SEARCH
            A7 OK Search completed

            """))
        #expect(responses[4] == .untagged(.search([2, 4], modSeq: 6)))
        #expect(responses[6] == .untagged(.search([], modSeq: nil)))
    }

    @Test func idleTranscript() throws {
        let responses = try parseTranscript(crlf("""
            + idling
            * 5 EXISTS
            * OK [HIGHESTMODSEQ 14] Highest
            * 5 FETCH (UID 7 MODSEQ (15) FLAGS (\\Flagged))
            * VANISHED 7
            * OK Still here
            A4 OK Idle completed

            """))
        #expect(responses[0] == .continuation("idling"))
        #expect(responses[4] == .untagged(.vanished(earlier: false, IMAPSequenceSet([7...7]))))
        #expect(responses[5] == .untagged(.condition(.ok, nil, "Still here")))
    }

    @Test func metadataValuesAsLiterals() throws {
        let responses = try parseTranscript(
            "* METADATA Notes (/private/vendor/vendor.anchorage/push/devtok-1 {32}\r\naccount=acct-A token=tok-notes-A "
                + "/private/vendor/vendor.anchorage/push/devtok-2 {32}\r\naccount=acct-B token=tok-notes-B)\r\n"
                + "* METADATA \"\" (/private/comment NIL)\r\n* METADATA INBOX /shared/comment /private/comment\r\n")
        #expect(responses[0] == .untagged(.metadata("Notes", [
            "/private/vendor/vendor.anchorage/push/devtok-1": "account=acct-A token=tok-notes-A",
            "/private/vendor/vendor.anchorage/push/devtok-2": "account=acct-B token=tok-notes-B",
        ])))
        let none: String? = nil
        #expect(responses[1] == .untagged(.metadata("", ["/private/comment": none])))
        #expect(responses[2] == .untagged(.metadata("INBOX", ["/shared/comment": none, "/private/comment": none])))
    }

    @Test func listStatusNotifyAndEnabled() throws {
        let responses = try parseTranscript(crlf("""
            * LIST () "." Notes
            * STATUS Notes (MESSAGES 60 UIDNEXT 66 UIDVALIDITY 1795465366 HIGHESTMODSEQ 85)
            * LIST (\\HasNoChildren \\Noselect) NIL {5}
            INBOX
            * LIST (\\HasChildren) "/" "Entw&APw-rfe" ("CHILDINFO" ("SUBSCRIBED"))
            * ENABLED QRESYNC
            * CAPABILITY IMAP4rev1 SASL-IR LITERAL+ AUTH=PLAIN
            * OK [CAPABILITY IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ AUTH=PLAIN AUTH=LOGIN] Dovecot (Debian) ready.
            * BYE Logging out
            A9 NO [TRYCREATE] Mailbox doesn't exist: Nope

            """))
        #expect(responses[0] == .untagged(.list(IMAPListEntry(attributes: [], delimiter: ".", name: "Notes"))))
        #expect(responses[1] == .untagged(.status("Notes", ["MESSAGES": 60, "UIDNEXT": 66, "UIDVALIDITY": 1_795_465_366, "HIGHESTMODSEQ": 85])))
        #expect(responses[2] == .untagged(.list(IMAPListEntry(attributes: ["\\HasNoChildren", "\\Noselect"], delimiter: nil, name: "INBOX"))))
        #expect(responses[3] == .untagged(.list(IMAPListEntry(attributes: ["\\HasChildren"], delimiter: "/", name: "Entwürfe"))))
        #expect(responses[4] == .untagged(.enabled(["QRESYNC"])))
        #expect(responses[5] == .untagged(.capability(["IMAP4rev1", "SASL-IR", "LITERAL+", "AUTH=PLAIN"])))
        guard case .untagged(.condition(.ok, .capability(let capabilities), _)) = responses[6] else { Issue.record("\(responses[6])"); return }
        #expect(capabilities.count == 9 && capabilities.last == "AUTH=LOGIN")
        #expect(responses[7] == .untagged(.condition(.bye, nil, "Logging out")))
        #expect(responses[8] == .tagged(tag: "A9", status: .no, code: .other("TRYCREATE", nil), text: "Mailbox doesn't exist: Nope"))
    }

    @Test func appendAnswersWithUntaggedDataFirst() throws {
        let responses = try parseTranscript(crlf("""
            + OK
            * 62 EXISTS
            * 2 RECENT
            * OK [HIGHESTMODSEQ 87] Highest
            A7 OK [APPENDUID 1795465366 66] Append completed (0.005 + 0.000 + 0.004 secs).
            A8 OK [COPYUID 38505 304,319:320 3956:3958] Done
            A9 OK [MODIFIED 7,9] Conditional STORE failed

            """))
        #expect(responses[0] == .continuation("OK"))
        #expect(responses[1] == .untagged(.exists(62)))
        #expect(responses[4] == .tagged(tag: "A7", status: .ok, code: .appendUID(uidValidity: 1_795_465_366, uids: IMAPSequenceSet([66...66])),
                                        text: "Append completed (0.005 + 0.000 + 0.004 secs)."))
        #expect(responses[5] == .tagged(tag: "A8", status: .ok, code: .copyUID(
            uidValidity: 38505, from: IMAPSequenceSet([304...304, 319...320]), to: IMAPSequenceSet([3956...3958])), text: "Done"))
        #expect(responses[6] == .tagged(tag: "A9", status: .ok, code: .modified(IMAPSequenceSet([7...7, 9...9])), text: "Conditional STORE failed"))
    }

    @Test func literalsAnywhereAndQuotedEscapes() throws {
        let responses = try parseTranscript(
            "* 1 FETCH (UID 9 BODY[HEADER.FIELDS (SUBJECT X-UNIVERSALLY-UNIQUE-IDENTIFIER)]<0> {11+}\r\nSubject: x\n ENVELOPE (\"a \\\"q\\\" \\\\ b\" NIL ~{3}\r\nabc))\r\n")
        guard case .untagged(.fetch(let fetch)) = responses[0] else { Issue.record("\(responses[0])"); return }
        #expect(fetch.sections["BODY[HEADER.FIELDS (SUBJECT X-UNIVERSALLY-UNIQUE-IDENTIFIER)]<0>"] == Array("Subject: x\n".utf8))
        #expect(fetch.other["ENVELOPE"] == .list([.string(Array("a \"q\" \\ b".utf8)), .nil, .string(Array("abc".utf8))]))
    }

    @Test func framesArriveInPieces() throws {
        let text = "* 1 FETCH (UID 1 BODY[] {10}\r\n0123456789)\r\nA1 OK done\r\n"
        var framer = IMAPResponseFramer()
        var units: [[UInt8]] = []
        for byte in text.utf8 {
            framer.append([byte])
            while let unit = try framer.next() { units.append(unit) }
        }
        #expect(units.count == 2)
        #expect(units[0] == Array("* 1 FETCH (UID 1 BODY[] {10}\r\n0123456789)\r\n".utf8))
    }

    @Test(arguments: [
        ("a literal too large", "* 1 FETCH (UID 1 BODY[] {100000000}\r\n", "literal of 100000000 bytes"),
        ("a line too long, unfinished", String(repeating: "x", count: 70_000), "longer than 65536 bytes"),
        ("a line too long", String(repeating: "x", count: 70_000) + "\r\n", "longer than 65536 bytes"),
    ])
    func limitsAreClearErrors(name: String, input: String, message: String) throws {
        var framer = IMAPResponseFramer()
        framer.append(Array(input.utf8))
        #expect(throws: IMAPError.self) { _ = try framer.next() }
        do {
            _ = try framer.next()
        } catch {
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test(arguments: [
        "A1 MAYBE yes", "* 1 FETCH UID 1", "* 1 FETCH (UID 1", "* 1 FETCH (MODSEQ 5)", "* SEARCH x", "* VANISHED 3:x",
        "* STATUS Notes (MESSAGES)", "* LIST () \"unterminated", "* 1 FETCH (BODY[] {5}\r\nab)", "* 99999999999 EXISTS",
        "* OK [UIDVALIDITY x] no", "* OK [HIGHESTMODSEQ 5 text", "* FLAGS (\"a\")", "",
        "* X ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((()))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
    ])
    func malformedResponsesAreErrors(line: String) {
        #expect(throws: IMAPError.self) { _ = try IMAPParser.parse(Array((line + "\r\n").utf8)) }
    }

    @Test func sequenceSets() throws {
        let set = try IMAPSequenceSet(parsing: "1:3,5,7:*")
        #expect(set.description == "1:3,5,7:*")
        #expect(set.contains(2) && !set.contains(4) && set.contains(1_000))
        #expect(set.numbers(largest: 8) == [1, 2, 3, 5, 7, 8])
        #expect(IMAPSequenceSet([5, 1, 2, 3, 9, 10]).description == "1:3,5,9:10")
        #expect(try IMAPSequenceSet(parsing: "4:2").description == "2:4")
        for bad in ["", "0", "1:", "a", "1,,2", "1:2:3", "4294967296"] {
            #expect(throws: IMAPError.self) { _ = try IMAPSequenceSet(parsing: bad) }
        }
    }

    @Test func modifiedUTF7() {
        #expect(ModifiedUTF7.encode("Entwürfe") == "Entw&APw-rfe")
        #expect(ModifiedUTF7.encode("A&B") == "A&-B")
        #expect(ModifiedUTF7.decode("A&-B") == "A&B")
        for name in ["Notes", "日本語", "a&b~c", "🙂 mixed ü"] {
            #expect(ModifiedUTF7.decode(ModifiedUTF7.encode(name)) == name)
        }
        #expect(ModifiedUTF7.decode("&broken") == "&broken")
    }
}
