import Foundation
import OTASync
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// Malformed OTA messages sent to ``OTAServer``: each gets the status
/// docs/ota.md gives it, always as an HTTP 200 answer that is
/// itself an OTA message, and none changes what the server stores.
@Suite("OTA server against malformed messages")
struct OTAMalformedMessageTests {
    // MARK: Message-level garbage

    @Test("bytes that are not in the codec's format are E_BadRequest", arguments: TestCodec.allCases)
    func notTheCodecsFormat(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let valid = try codec.codec.encode(Wire.validMessage(tag: "garbage"))
        let other = TestCodec.allCases[(TestCodec.allCases.firstIndex(of: codec)! + 1) % TestCodec.allCases.count]
        let inputs: [(String, [UInt8])] = [
            ("no bytes", []),
            ("prose", Array("this is not an OTA message, just words".utf8)),
            ("noise", [0xFF, 0x00, 0x13, 0x37, 0xC1, 0xFE]),
            ("the first half of a valid message", Array(valid.prefix(valid.count / 2))),
            ("a valid message in \(other)", try other.codec.encode(Wire.validMessage(tag: "garbage"))),
        ]
        let before = try await probe.snapshot()
        for (label, bytes) in inputs {
            let answer = try await probe.refusal(of: probe.post(bytes: bytes), label)
            #expect(answer.header.result?.map(\.status) == [.badRequest], "\(label)")
        }
        #expect(try await probe.snapshot() == before)
        try await probe.expectControlChangesData(before)
    }

    @Test("a value that is not a dictionary with exactly header and body is E_BadRequest", arguments: TestCodec.allCases)
    func notAMessageDictionary(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let message = Wire.validMessage(tag: "shape")
        let header = message["header"]!
        let body = message["body"]!
        let values: [(String, SyncValue)] = [
            ("an array holding the message", [message]),
            ("a string", "header body"),
            ("an integer", 42),
            ("a Boolean", true),
            ("a real", 2.5),
            ("an empty dictionary", [:]),
            ("no body", ["header": header]),
            ("no header", ["body": body]),
            ("an extra key", ["header": header, "body": body, "trailer": "x"]),
            ("a misspelt key", ["Header": header, "body": body]),
        ]
        try await probe.expectRefused(values, .badRequest)
    }

    @Test("a header that is not a dictionary, lacks a field or has one of the wrong type is E_BadRequest", arguments: TestCodec.allCases)
    func malformedHeader(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let message = Wire.validMessage(tag: "header")
        func with(_ change: (inout [String: SyncValue]) -> Void) -> SyncValue {
            var header = message["header"]!.dictionaryValue!
            change(&header)
            return ["header": .dictionary(header), "body": message["body"]!]
        }
        var values: [(String, SyncValue)] = [
            ("header a string", ["header": "ada", "body": message["body"]!]),
            ("header an array", ["header": [message["header"]!], "body": message["body"]!]),
        ]
        for key in ["version", "service", "userid", "deviceid", "sequence"] {
            values.append(("no \(key)", with { $0[key] = nil }))
        }
        let wrongTypes: [(String, SyncValue)] = [
            ("userid", 5), ("userid", ["ada"]), ("deviceid", true), ("deviceid", ["id": "fuzz"]), ("version", 1),
            ("service", 2.5), ("sequence", "one"), ("sequence", 1.5), ("sequence", true), ("sequence", [1]),
            ("final", "yes"), ("msisdn", 491_701_234), ("result", "none"), ("result", ["S_OK"]),
        ]
        for (key, value) in wrongTypes { values.append(("\(key) = \(value)", with { $0[key] = value })) }
        values.append(("sequence 0", with { $0["sequence"] = 0 }))
        values.append(("sequence -1", with { $0["sequence"] = -1 }))
        try await probe.expectRefused(values, .badRequest)
    }

    @Test("a body that is not an array, or an entry that is not a command, is E_BadRequest", arguments: TestCodec.allCases)
    func malformedBody(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let message = Wire.validMessage(tag: "body")
        let entries = message["body"]!.arrayValue!
        func body(_ body: SyncValue) -> SyncValue { ["header": message["header"]!, "body": body] }
        func entry(_ index: Int, _ change: (inout [String: SyncValue]) -> Void) -> SyncValue {
            var all = entries
            var entry = all[index].dictionaryValue!
            change(&entry)
            all[index] = .dictionary(entry)
            return body(.array(all))
        }
        let values: [(String, SyncValue)] = [
            ("body a dictionary", body(["0": entries[0]])),
            ("body a string", body("sync-start")),
            ("body an integer", body(4)),
            ("an entry that is a string", body(.array(entries + ["sync-commit"]))),
            ("an entry that is an integer", body(.array([7] + entries))),
            ("an entry that is an array", body(.array([.array(entries)]))),
            ("an entry without name", entry(1) { $0["name"] = nil }),
            ("an entry without sequence", entry(1) { $0["sequence"] = nil }),
            ("an entry with sequence 0", entry(1) { $0["sequence"] = 0 }),
            ("an entry with sequence -4", entry(0) { $0["sequence"] = -4 }),
            ("an entry with sequence \"two\"", entry(1) { $0["sequence"] = "two" }),
            ("an entry whose name is an integer", entry(0) { $0["name"] = 1 }),
            ("an entry whose params is a string", entry(1) { $0["params"] = "uri" }),
            ("an entry whose params is an array", entry(1) { $0["params"] = [["uri": "com.apple.Contacts"]] }),
            ("an entry whose more is a string", entry(1) { $0["more"] = "no" }),
            ("an entry whose response is a string", entry(0) { $0["response"] = "yes" }),
            ("a response whose result is not an array", entry(0) { $0["response"] = true; $0["result"] = "S_OK" }),
            ("a response whose status is unknown", entry(0) { $0["response"] = true; $0["result"] = [["status": "S_Fine", "code": 42]] }),
        ]
        try await probe.expectRefused(values, .badRequest)
    }

    @Test("a version other than 1.0 is E_VersionNotSupported", arguments: TestCodec.allCases)
    func unsupportedVersion(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let values = ["2.0", "1.1", "1", "", "1.0.0"].map { version in
            ("version \(version)", Wire.validMessage(tag: "version", header: { $0["version"] = .string(version) }))
        }
        try await probe.expectRefused(values, .versionNotSupported)
    }

    @Test("a userid other than the authenticated account is E_NotAllowed for userid", arguments: TestCodec.allCases)
    func foreignUser(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let before = try await probe.snapshot()
        for userid in ["bob", "Ada", "ada ", ""] {
            let message = Wire.validMessage(tag: "userid", header: { $0["userid"] = .string(userid) })
            // Straight to the service, as the authenticated account `ada`.
            let response = try await probe.harness.server.handle(
                probe.request(try codec.codec.encode(message)), context: ServiceContext(account: "ada"))
            let answer = try probe.refusal(of: response, "userid \(userid)")
            #expect(answer.header.result?.first?.status == .notAllowed, "userid \(userid)")
            #expect(answer.header.result?.first?.paramName == "userid", "userid \(userid)")
        }
        #expect(try await probe.snapshot() == before)
        try await probe.expectControlChangesData(before)
    }

    @Test("a message larger than maxMessageBytes is E_LimitExceeded", arguments: TestCodec.allCases)
    func tooLarge(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec, harness: OTAHarness(maxMessageBytes: 4_096))
        let note = SyncValue.string(String(repeating: "long note ", count: 600))
        let large = Wire.message([
            Wire.start(Dataclass.contacts, 1),
            Wire.changes(Dataclass.contacts, 2, ["L-big": Wire.add(["first name": "Ada", "note": note])]),
        ])
        let bytes = try codec.codec.encode(large)
        #expect(bytes.count > 4_096)
        let before = try await probe.snapshot()
        let answer = try await probe.refusal(of: probe.post(bytes: bytes), "large message")
        #expect(answer.header.result?.map(\.status) == [.limitExceeded])
        #expect(try await probe.snapshot() == before)
        // A valid message within the limit is taken.
        try await probe.expectControlChangesData(before)
    }

    // MARK: Per-command errors

    @Test("an unknown command is E_UnknownCommand and the other commands still run", arguments: TestCodec.allCases)
    func unknownCommand(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let answer = try await probe.process([
            Wire.command("frobnicate", 1, ["uri": .string(Dataclass.contacts)]),
            Wire.start(Dataclass.contacts, 2),
            Wire.command("sync-synchronize", 3, [:]),
            Wire.changes(Dataclass.contacts, 4, ["L-1": Wire.add(["first name": "Ada"])]),
        ])
        #expect(answer.result(of: 1, "frobnicate")?.status == .unknownCommand)
        #expect(answer.result(of: 2, "sync-start")?.status == .ok)
        #expect(answer.result(of: 3, "sync-synchronize")?.status == .unknownCommand)
        #expect(answer.result(of: 4, "sync-changes")?.status == .ok)
        #expect(try await probe.harness.serverRecords(Dataclass.contacts) == [OTARecord(entity: Dataclass.contact, fields: ["first name": "Ada"])])
    }

    @Test("sync-start with a missing, mistyped or refused uri or anchors gets its status; its sync-changes is not processed", arguments: TestCodec.allCases)
    func badSyncStart(codec: TestCodec) async throws {
        let contacts = SyncValue.string(Dataclass.contacts)
        let cases: [(label: String, params: [String: SyncValue], expected: OTAResult)] = [
            ("no uri", ["anchors": ["mode": "slow"]], OTAResult(.missingParam, paramName: "uri")),
            ("uri an integer", ["uri": 5, "anchors": ["mode": "slow"]], OTAResult(.paramError, paramName: "uri")),
            ("uri an array", ["uri": [contacts], "anchors": ["mode": "slow"]], OTAResult(.paramError, paramName: "uri")),
            ("an unsupported dataclass", ["uri": "com.example.Notes", "anchors": ["mode": "slow"]], OTAResult(.notSupported, paramName: "uri")),
            ("anchors a string", ["uri": contacts, "anchors": "slow"], OTAResult(.paramError, paramName: "anchors")),
            ("anchors an array", ["uri": contacts, "anchors": ["slow"]], OTAResult(.paramError, paramName: "anchors")),
            ("an unknown mode", ["uri": contacts, "anchors": ["mode": "turbo"]], OTAResult(.badValue, paramName: "anchors", paramKey: "mode")),
            ("a mode of the wrong type", ["uri": contacts, "anchors": ["mode": 2]], OTAResult(.paramError, paramName: "anchors", paramKey: "mode")),
            ("an unknown direction", ["uri": contacts, "anchors": ["mode": "slow", "direction": "sideways"]], OTAResult(.notSupported, paramName: "anchors", paramKey: "direction")),
            ("a refused server_version", ["uri": contacts, "anchors": ["mode": "slow", "server_version": "9.9"]], OTAResult(.versionNotSupported, paramName: "anchors", paramKey: "server_version")),
        ]
        for (label, params, expected) in cases {
            let probe = OTAProbe(codec: codec)
            let before = try await probe.snapshot()
            // The sync-changes names the same uri (none when the sync-start has none): the same family.
            var changes: [String: SyncValue] = ["itemtype": "records", "items": ["L-1": Wire.add(["first name": "Ada"])]]
            changes["uri"] = params["uri"]
            let answer = try await probe.process([Wire.command("sync-start", 1, params), Wire.command("sync-changes", 2, changes)])
            let start = answer.result(of: 1, "sync-start")
            #expect(start?.status == expected.status, "\(label): \(String(describing: start))")
            #expect(start?.paramName == expected.paramName, "\(label): \(String(describing: start))")
            if let key = expected.paramKey { #expect(start?.paramKey == key, "\(label): \(String(describing: start))") }
            #expect(answer.result(of: 2, "sync-changes")?.status == .commandNotProcessed, "\(label)")
            #expect(try await probe.snapshot() == before, "\(label)")
        }
    }

    @Test("a disabled dataclass is E_NotAllowed while an enabled one syncs in the same message", arguments: TestCodec.allCases)
    func disabledDataclass(codec: TestCodec) async throws {
        let store = MemoryStore()
        let server = OTAServer(
            store: store, codecs: TestCodec.otaServerCodecs, dataclasses: Set(Dataclass.all), disabledDataclasses: [Dataclass.calendars])
        let probe = OTAProbe(codec: codec, store: store, transport: OTAHarness.loopback(to: server))
        let before = try await probe.snapshot()
        let answer = try await probe.process([
            Wire.start(Dataclass.calendars, 1),
            Wire.changes(Dataclass.calendars, 2, ["E-1": Wire.add(["title": "Standup"], entity: "com.apple.calendars.Event")]),
            Wire.start(Dataclass.contacts, 3),
            Wire.changes(Dataclass.contacts, 4, ["L-1": Wire.add(["first name": "Ada"])]),
        ])
        #expect(answer.result(of: 1, "sync-start")?.status == .notAllowed)
        #expect(answer.result(of: 1, "sync-start")?.paramName == "uri")
        #expect(answer.result(of: 2, "sync-changes")?.status == .commandNotProcessed)
        #expect(answer.result(of: 3, "sync-start")?.status == .ok)
        #expect(answer.result(of: 4, "sync-changes")?.status == .ok)
        let after = try await probe.snapshot()
        #expect(after.records(in: Dataclass.calendars) == before.records(in: Dataclass.calendars))
        #expect(after.metadata(of: Dataclass.calendars) == before.metadata(of: Dataclass.calendars))
        #expect(after.records(in: Dataclass.contacts).count == 1)

        // A disabled dataclass's sync-changes on its own is refused as well, and changes nothing.
        let alone = try await probe.process(
            [Wire.changes(Dataclass.calendars, 1, ["E-2": Wire.add(["title": "Review"], entity: "com.apple.calendars.Event")])])
        #expect(alone.result(of: 1, "sync-changes")?.status == .notAllowed)
        #expect(try await probe.snapshot() == after)
    }

    @Test("sync-changes before sync-start is E_StateError", arguments: TestCodec.allCases)
    func changesBeforeStart(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let before = try await probe.snapshot()
        let answer = try await probe.process([
            Wire.changes(Dataclass.contacts, 1, ["L-1": Wire.add(["first name": "Ada"])]),
            Wire.start(Dataclass.contacts, 2),
        ])
        #expect(answer.result(of: 1, "sync-changes")?.status == .stateError)
        // The family failed: the later sync-start of that dataclass is not processed.
        #expect(answer.result(of: 2, "sync-start")?.status == .commandNotProcessed)
        #expect(try await probe.snapshot() == before)
    }

    @Test("sync-changes with missing, mistyped or invalid items gets its status and applies nothing", arguments: TestCodec.allCases)
    func badItems(codec: TestCodec) async throws {
        let good = Wire.add(["first name": "Ada"])
        let cases: [(label: String, params: [String: SyncValue], expected: OTAResult)] = [
            ("items missing", ["itemtype": "records"], OTAResult(.missingParam, paramName: "items")),
            ("items an array", ["items": [good]], OTAResult(.paramError, paramName: "items")),
            ("items a string", ["items": "L-1"], OTAResult(.paramError, paramName: "items")),
            ("an unknown op", ["items": ["L-1": good, "L-2": ["op": "upsert", "entity": .string(Dataclass.contact), "record": ["first name": "Bo"]]]],
             OTAResult(.badValue, paramName: "items", paramKey: "L-2")),
            ("an item that is a string", ["items": ["L-1": good, "L-3": "add"]], OTAResult(.paramError, paramName: "items", paramKey: "L-3")),
            ("an item without op", ["items": ["L-0": ["entity": .string(Dataclass.contact), "record": [:]], "L-1": good]],
             OTAResult(.missingParam, paramName: "items", paramKey: "L-0")),
            ("an add without entity", ["items": ["L-1": good, "L-4": ["op": "add", "record": ["first name": "Cy"]]]],
             OTAResult(.missingParam, paramName: "items", paramKey: "L-4")),
            ("an add without record", ["items": ["L-1": good, "L-5": ["op": "add", "entity": .string(Dataclass.contact)]]],
             OTAResult(.missingParam, paramName: "items", paramKey: "L-5")),
            ("a record that is an array", ["items": ["L-1": good, "L-6": ["op": "add", "entity": .string(Dataclass.contact), "record": ["Cy"]]]],
             OTAResult(.paramError, paramName: "items", paramKey: "L-6")),
            ("an entity that is an integer", ["items": ["L-1": good, "L-7": ["op": "add", "entity": 7, "record": [:]]]],
             OTAResult(.paramError, paramName: "items", paramKey: "L-7")),
            ("an unknown itemtype", ["itemtype": "diffs", "items": ["L-1": good]], OTAResult(.badValue, paramName: "itemtype")),
            ("an itemtype of the wrong type", ["itemtype": ["records"], "items": ["L-1": good]], OTAResult(.paramError, paramName: "itemtype")),
        ]
        for (label, extra, expected) in cases {
            let probe = OTAProbe(codec: codec)
            let before = try await probe.snapshot()
            var params: [String: SyncValue] = ["uri": .string(Dataclass.contacts)]
            params.merge(extra) { $1 }
            let answer = try await probe.process([
                Wire.start(Dataclass.contacts, 1),
                Wire.command("sync-changes", 2, params),
                Wire.changes(Dataclass.contacts, 3, ["L-9": good]),
            ])
            #expect(answer.result(of: 1, "sync-start")?.status == .ok, "\(label)")
            let changes = answer.result(of: 2, "sync-changes")
            #expect(changes?.status == expected.status, "\(label): \(String(describing: changes))")
            #expect(changes?.paramName == expected.paramName, "\(label): \(String(describing: changes))")
            #expect(changes?.paramKey == expected.paramKey, "\(label): \(String(describing: changes))")
            #expect(answer.result(of: 3, "sync-changes")?.status == .commandNotProcessed, "\(label)")
            #expect(try await probe.snapshot() == before, "\(label)")
        }
    }

    @Test("an item whose op has the wrong type is E_ParamError, not E_MissingParam", arguments: TestCodec.allCases)
    func opOfTheWrongType(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let before = try await probe.snapshot()
        let answer = try await probe.process([
            Wire.start(Dataclass.contacts, 1),
            Wire.changes(Dataclass.contacts, 2, ["L-1": ["op": 1, "entity": .string(Dataclass.contact), "record": ["first name": "Ada"]]]),
        ])
        let result = answer.result(of: 2, "sync-changes")
        // E_ParamError is "a parameter has the wrong type"; op is there, it is not missing.
        #expect(result?.status == .paramError, "\(String(describing: result))")
        #expect(result?.paramName == "items")
        #expect(result?.paramKey == "L-1")
        #expect(try await probe.snapshot() == before)
    }

    @Test("a second sync-start for a running dataclass is E_StateError and the sync goes on", arguments: TestCodec.allCases)
    func secondStart(codec: TestCodec) async throws {
        // In one message.
        let probe = OTAProbe(codec: codec)
        let before = try await probe.snapshot()
        let same = try await probe.process([
            Wire.start(Dataclass.contacts, 1),
            Wire.start(Dataclass.contacts, 2),
            Wire.changes(Dataclass.contacts, 3, ["L-1": Wire.add(["first name": "Ada"])]),
        ])
        #expect(same.result(of: 1, "sync-start")?.status == .ok)
        #expect(same.result(of: 2, "sync-start")?.status == .stateError)
        #expect(same.result(of: 3, "sync-changes")?.status == .commandNotProcessed)
        #expect(try await probe.snapshot() == before)

        // Across messages: the session keeps the running dataclass and takes its changes afterwards.
        let session = OTAProbe(codec: codec)
        let first = try await session.exchange(Wire.message([
            Wire.start(Dataclass.contacts, 1),
            Wire.changes(Dataclass.contacts, 2, ["L-1": Wire.add(["first name": "Ada"])], more: true),
        ]))
        #expect(first.answer.result(of: 1, "sync-start")?.status == .ok)
        #expect(first.answer.result(of: 2, "sync-changes")?.status == .notCompleted)
        let cookie = try #require(first.response.session)
        let second = try await session.exchange(Wire.message([Wire.start(Dataclass.contacts, 3)], sequence: 2), session: cookie)
        #expect(second.answer.header.result == nil)
        #expect(second.answer.result(of: 3, "sync-start")?.status == .stateError)
        #expect(try await session.harness.serverRecords(Dataclass.contacts).isEmpty)
        let third = try await session.exchange(
            Wire.message([Wire.changes(Dataclass.contacts, 2, ["L-2": Wire.add(["first name": "Bo"])])], sequence: 3), session: cookie)
        #expect(third.answer.result(of: 2, "sync-changes")?.status == .ok)
        #expect(Set(try await session.harness.serverRecords(Dataclass.contacts)) == [
            OTARecord(entity: Dataclass.contact, fields: ["first name": "Ada"]),
            OTARecord(entity: Dataclass.contact, fields: ["first name": "Bo"]),
        ])
    }

    @Test("after a failed sync-start its sync-changes is E_CommandNotProcessed; another dataclass syncs", arguments: TestCodec.allCases)
    func failedStartLeavesOthers(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let before = try await probe.snapshot()
        let event = Wire.add(["title": "Standup"], entity: "com.apple.calendars.Event")
        let answer = try await probe.process([
            Wire.command("sync-start", 1, ["uri": .string(Dataclass.contacts), "anchors": "slow"]),
            Wire.start(Dataclass.calendars, 2),
            Wire.changes(Dataclass.contacts, 3, ["L-1": Wire.add(["first name": "Ada"])]),
            Wire.changes(Dataclass.calendars, 4, ["E-1": event]),
            Wire.command("sync-commit", 5, ["uri": .string(Dataclass.contacts)]),
        ])
        #expect(answer.result(of: 1, "sync-start")?.status == .paramError)
        #expect(answer.result(of: 2, "sync-start")?.status == .ok)
        #expect(answer.result(of: 3, "sync-changes")?.status == .commandNotProcessed)
        #expect(answer.result(of: 4, "sync-changes")?.status == .ok)
        #expect(answer.result(of: 5, "sync-commit")?.status == .commandNotProcessed)
        let after = try await probe.snapshot()
        #expect(after.records(in: Dataclass.contacts) == before.records(in: Dataclass.contacts))
        #expect(after.metadata(of: Dataclass.contacts) == before.metadata(of: Dataclass.contacts))
        #expect(after.metadata(of: Dataclass.calendars) != before.metadata(of: Dataclass.calendars))
        #expect(try await probe.harness.serverRecords(Dataclass.calendars) == [OTARecord(entity: "com.apple.calendars.Event", fields: ["title": "Standup"])])
        // The server commits only the dataclass that synced.
        #expect(answer.commands.filter { $0.name == "sync-commit" }.map(\.uri) == [Dataclass.calendars])
    }

    @Test("a device's sync-commit before the server's commit is E_StateError", arguments: TestCodec.allCases)
    func earlyCommit(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let before = try await probe.snapshot()
        let answer = try await probe.process([
            Wire.start(Dataclass.contacts, 1),
            Wire.command("sync-commit", 2, ["uri": .string(Dataclass.contacts), "anchors": ["next_device_anchor": "d.2"]]),
            Wire.changes(Dataclass.contacts, 3, ["L-1": Wire.add(["first name": "Ada"])]),
        ])
        #expect(answer.result(of: 1, "sync-start")?.status == .ok)
        #expect(answer.result(of: 2, "sync-commit")?.status == .stateError)
        #expect(answer.result(of: 3, "sync-changes")?.status == .commandNotProcessed)
        #expect(try await probe.snapshot() == before)
    }

    @Test("sync-commit and sync-cancel without a usable dataclass get the statuses of the uri rules", arguments: TestCodec.allCases)
    func commitAndCancelURI(codec: TestCodec) async throws {
        let store = MemoryStore()
        let server = OTAServer(
            store: store, codecs: TestCodec.otaServerCodecs, dataclasses: Set(Dataclass.all), disabledDataclasses: [Dataclass.calendars])
        let probe = OTAProbe(codec: codec, store: store, transport: OTAHarness.loopback(to: server))
        let before = try await probe.snapshot()
        // docs/ota.md: the stateful commands each carry uri = the dataclass; an unsupported
        // dataclass is E_NotSupported for uri, a disabled one E_NotAllowed.
        let cases: [(label: String, params: [String: SyncValue], expected: OTAStatus)] = [
            ("no uri", [:], .missingParam),
            ("uri an integer", ["uri": 5], .paramError),
            ("an unsupported dataclass", ["uri": "com.example.Notes"], .notSupported),
            ("a disabled dataclass", ["uri": .string(Dataclass.calendars)], .notAllowed),
        ]
        for name in ["sync-commit", "sync-cancel"] {
            for (label, params, expected) in cases {
                let answer = try await probe.process([Wire.command(name, 1, params)])
                let result = answer.result(of: 1, name)
                #expect(result?.status.isSuccess == false, "\(name), \(label)")
                #expect(result?.paramName == "uri", "\(name), \(label): \(String(describing: result))")
                #expect(result?.status == expected, "\(name), \(label): \(String(describing: result))")
            }
        }
        #expect(try await probe.snapshot() == before)
    }

    @Test("a sync-changes whose dataclass is canceled later in the message is not answered S_OK", arguments: TestCodec.allCases)
    func canceledAfterChanges(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let before = try await probe.snapshot()
        let answer = try await probe.process([
            Wire.start(Dataclass.contacts, 1),
            Wire.changes(Dataclass.contacts, 2, ["L-1": Wire.add(["first name": "Ada"])]),
            Wire.command("sync-cancel", 3, ["uri": .string(Dataclass.contacts)]),
            Wire.start(Dataclass.calendars, 4),
            Wire.changes(Dataclass.calendars, 5, ["E-1": Wire.add(["title": "Standup"], entity: "com.apple.calendars.Event")]),
        ])
        #expect(answer.result(of: 3, "sync-cancel")?.status == .ok)
        #expect(answer.result(of: 5, "sync-changes")?.status == .ok)
        let after = try await probe.snapshot()
        // Contacts was canceled: nothing of it is stored, and the server commits only calendars.
        #expect(after.records(in: Dataclass.contacts) == before.records(in: Dataclass.contacts))
        #expect(after.metadata(of: Dataclass.contacts) == before.metadata(of: Dataclass.contacts))
        #expect(after.records(in: Dataclass.calendars).count == 1)
        #expect(answer.commands.filter { $0.name == "sync-commit" }.map(\.uri) == [Dataclass.calendars])
        // S_OK, with its checkpoint anchor, would tell the device its contacts are on the server.
        let changes = answer.responses.first { $0.sequence == 2 && $0.name == "sync-changes" }
        #expect(changes?.status == .notCompleted || changes?.status == .canceled, "\(String(describing: changes))")
    }

    // MARK: What a failed command leaves behind

    @Test("a sync-changes refused for its direction stores nothing, its idmap included", arguments: TestCodec.allCases)
    func refusedChangesKeepIDMap(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let before = try await probe.snapshot()
        let answer = try await probe.process([
            Wire.start(Dataclass.contacts, 1, anchors: ["direction": "to_device"]),
            Wire.command("sync-changes", 2, [
                "uri": .string(Dataclass.contacts), "itemtype": "records", "idmap": ["U-1": "L-9"],
                "items": ["L-1": Wire.add(["first name": "Ada"])],
            ]),
        ])
        #expect(answer.result(of: 1, "sync-start")?.status == .ok)
        #expect(answer.result(of: 2, "sync-changes")?.status == .notAllowed)
        #expect(try await probe.snapshot() == before)

        // The same idmap in a sync-changes that is taken is stored: the snapshot sees id maps.
        let taken = OTAProbe(codec: codec)
        let answerTaken = try await taken.process([
            Wire.start(Dataclass.contacts, 1),
            Wire.command("sync-changes", 2, [
                "uri": .string(Dataclass.contacts), "itemtype": "records", "idmap": ["U-1": "L-9"],
                "items": ["L-1": Wire.add(["first name": "Ada"])],
            ], more: true),
        ])
        #expect(answerTaken.result(of: 2, "sync-changes")?.status == .notCompleted)
        #expect(try await taken.snapshot().metadata("ota.idmap\u{1F}\(Dataclass.contacts)\u{1F}l\u{1F}L-9") == "U-1")
    }

    @Test("a malformed command response from the device makes the message E_BadRequest, not HTTP 500", arguments: TestCodec.allCases)
    func malformedDeviceResponse(codec: TestCodec) async throws {
        let responses: [(String, SyncValue)] = [
            ("idmap a string", ["uri": .string(Dataclass.contacts), "idmap": "U-1=L-1"]),
            ("idmap values not strings", ["uri": .string(Dataclass.contacts), "idmap": ["U-1": 1]]),
            ("an idmap for an unsupported dataclass", ["uri": "com.example.Notes", "idmap": ["U-1": "L-1"]]),
        ]
        for (label, params) in responses {
            let probe = OTAProbe(codec: codec)
            let before = try await probe.snapshot()
            let response: SyncValue = [
                "name": "sync-changes", "sequence": 1, "response": true, "params": params,
                "result": [["status": "S_OK", "code": 600]],
            ]
            let sent = try await probe.post(Wire.message([
                response, Wire.start(Dataclass.contacts, 1), Wire.changes(Dataclass.contacts, 2, ["L-1": Wire.add(["first name": "Ada"])]),
            ]))
            #expect(sent.status == 200, "\(label): HTTP \(sent.status) \(String(decoding: sent.body.prefix(200), as: UTF8.self))")
            guard sent.status == 200 else { continue }
            let answer = try probe.refusal(of: sent, label)
            // A malformed body entry makes the message E_BadRequest, whatever part of it is wrong.
            #expect(answer.header.result?.map(\.status) == [.badRequest], "\(label)")
            // Nothing of the message was applied: not its commands either.
            #expect(try await probe.snapshot() == before, "\(label)")
        }
    }

    // MARK: Sequencing

    @Test("a sequence gap is E_BadRequest and the session goes on with the expected message", arguments: TestCodec.allCases)
    func sequenceGap(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let first = try await probe.exchange(Wire.message([
            Wire.start(Dataclass.contacts, 1),
            Wire.changes(Dataclass.contacts, 2, ["L-1": Wire.add(["first name": "Ada"])], more: true),
        ]))
        #expect(first.answer.header.result == nil)
        #expect(first.answer.result(of: 2, "sync-changes")?.status == .notCompleted)
        let cookie = try #require(first.response.session)
        let afterFirst = try await probe.snapshot()

        let gap = Wire.message([Wire.changes(Dataclass.contacts, 2, ["L-3": Wire.add(["first name": "Gap"])])], sequence: 3)
        let refused = try probe.refusal(of: try await probe.post(gap, session: cookie), "message 3 after 1")
        #expect(refused.header.result?.map(\.status) == [.badRequest])
        #expect(try await probe.snapshot() == afterFirst)
        // Bytes that are no message, in the session, are refused the same way and leave it as it was.
        let garbage = try probe.refusal(of: try await probe.post(bytes: Array("not a message".utf8), session: cookie), "garbage in the session")
        #expect(garbage.header.result?.map(\.status) == [.badRequest])
        #expect(try await probe.snapshot() == afterFirst)

        let second = try await probe.exchange(
            Wire.message([Wire.changes(Dataclass.contacts, 2, ["L-2": Wire.add(["first name": "Bo"])])], sequence: 2), session: cookie)
        #expect(second.answer.header.result == nil)
        #expect(second.answer.header.sequence == 2)
        #expect(second.answer.result(of: 2, "sync-changes")?.status == .ok)
        #expect(Set(try await probe.harness.serverRecords(Dataclass.contacts)) == [
            OTARecord(entity: Dataclass.contact, fields: ["first name": "Ada"]),
            OTARecord(entity: Dataclass.contact, fields: ["first name": "Bo"]),
        ])
        // Message 3 is now the expected one.
        let third = try await probe.exchange(Wire.message([], sequence: 3), session: cookie)
        #expect(third.answer.header.result == nil)
        #expect(third.answer.header.sequence == 3)
    }

    @Test("a repeated message gets the same answer, byte for byte, and is applied once", arguments: TestCodec.allCases)
    func repeatedMessage(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let one = try codec.codec.encode(Wire.message([
            Wire.start(Dataclass.contacts, 1),
            Wire.changes(Dataclass.contacts, 2, ["L-1": Wire.add(["first name": "Ada"]), "L-2": Wire.add(["first name": "Bo"])]),
        ]))
        let first = try await probe.post(bytes: one)
        #expect(first.status == 200)
        #expect(try probe.answer(first).result(of: 2, "sync-changes")?.status == .ok)
        let cookie = try #require(first.session)
        let applied = try await probe.snapshot()
        #expect(try await probe.harness.serverRecords(Dataclass.contacts).count == 2)

        let again = try await probe.post(bytes: one, session: cookie)
        #expect(again.status == 200)
        #expect(again.body == first.body)
        #expect(try await probe.snapshot() == applied)

        let two = try codec.codec.encode(Wire.message([], sequence: 2))
        let second = try await probe.post(bytes: two, session: cookie)
        #expect(try probe.answer(second).header.sequence == 2)
        for (label, bytes, answer) in [("message 2", two, second), ("message 1", one, first), ("message 2", two, second)] {
            let repeated = try await probe.post(bytes: bytes, session: cookie)
            #expect(repeated.status == 200, "\(label)")
            #expect(repeated.body == answer.body, "\(label)")
        }
        #expect(try await probe.snapshot() == applied)
        #expect(try await probe.harness.serverRecords(Dataclass.contacts).count == 2)
    }

    @Test("a message after the first without a known session is E_StateError", arguments: TestCodec.allCases)
    func noSession(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let before = try await probe.snapshot()
        for (label, sequence, cookie) in [("2, no cookie", 2, nil), ("5, no cookie", 5, nil), ("2, unknown cookie", 2, "no-such-session")] as [(String, Int, String?)] {
            let message = Wire.validMessage(tag: "session", header: { $0["sequence"] = .integer(Int64(sequence)) })
            let answer = try probe.refusal(of: try await probe.post(message, session: cookie), label)
            #expect(answer.header.result?.map(\.status) == [.stateError], "\(label)")
        }
        #expect(try await probe.snapshot() == before)
        try await probe.expectControlChangesData(before)
    }

    @Test("another device's message in a session is E_NotAllowed for deviceid", arguments: TestCodec.allCases)
    func anotherDevice(codec: TestCodec) async throws {
        let probe = OTAProbe(codec: codec)
        let first = try await probe.exchange(Wire.message([Wire.start(Dataclass.contacts, 1)]))
        let cookie = try #require(first.response.session)
        let before = try await probe.snapshot()
        let intruder = Wire.message(
            [Wire.changes(Dataclass.contacts, 2, ["L-1": Wire.add(["first name": "Eve"])])], sequence: 2, device: "other")
        let answer = try probe.refusal(of: try await probe.post(intruder, session: cookie), "another device")
        #expect(answer.header.result?.first?.status == .notAllowed)
        #expect(answer.header.result?.first?.paramName == "deviceid")
        #expect(try await probe.snapshot() == before)
    }

    // MARK: Randomized

    @Test("mutated messages get the predicted statuses and change data only when they sync", arguments: TestCodec.allCases)
    func fuzz(codec: TestCodec) async throws {
        // Each iteration mutates a valid first message (two dataclasses started slow, with new
        // records) and sends it in a new session. `OTAOracle` predicts the answer — refused, or
        // each command's status and which dataclasses mingle — and its doc comment explains why
        // only those dataclasses may change. The store is compared before and after each message.
        let probe = OTAProbe(codec: codec)
        var random = SplitMix64(seed: 0x0A7A_5EED ^ UInt64(TestCodec.allCases.firstIndex(of: codec)!))
        var tally = (refused: 0, unchanged: 0, synced: 0, repeats: 0)
        for iteration in 0..<300 {
            let base = Wire.validMessage(tag: "\(iteration)")
            var mutated = base
            var log: [String] = []
            let count = Int.random(in: 0..<8, using: &random) == 0 ? 0 : Int.random(in: 1...3, using: &random)
            for _ in 0..<count {
                let (next, description) = Mutator.mutate(mutated, using: &random)
                mutated = next
                log.append(description)
            }
            let bytes = try codec.codec.encode(mutated)
            // What the server reads: a JSON date or data arrives as a string, for one.
            let seen = try codec.codec.decode(bytes)
            let prediction = OTAOracle.predict(seen)
            let context = "iteration \(iteration), mutations: \(log.joined(separator: "; "))"

            // A mutated deviceid can be another valid one (a JSON date is a string): that device's metadata counts too.
            let sender = seen["header"]?["deviceid"]?.stringValue ?? OTAProbe.device
            let before = try await probe.snapshot(others: [sender])
            let response = try await probe.post(bytes: bytes)
            #expect(response.status == 200, "\(context)")
            let answer = try OTAMessage(codec.codec.decode(response.body))
            let after = try await probe.snapshot(others: [sender])

            switch prediction {
            case .refused(let status):
                tally.refused += 1
                #expect(answer.header.result?.map(\.status) == [status], "\(context)")
                #expect(answer.body.isEmpty, "\(context)")
                #expect(after == before, "\(context)")
            case .processed(let expected):
                #expect(answer.header.result == nil, "\(context)")
                let responses = answer.responses
                #expect(responses.count == expected.responses.count, "\(context)")
                for (got, want) in zip(responses, expected.responses) {
                    want.check(got, "\(context)")
                }
                // Model-free oracle: a dataclass whose sync-changes was not answered
                // S_OK was not mingled, so neither its records nor the device's
                // metadata for it may have changed.
                let okChanges = Set(responses.filter { $0.name == "sync-changes" && $0.status == .ok }.compactMap(\.uri))
                for dataclass in Dataclass.all where !okChanges.contains(dataclass) {
                    #expect(after.records(in: dataclass) == before.records(in: dataclass), "\(context)")
                    #expect(after.metadata(of: dataclass) == before.metadata(of: dataclass), "\(context)")
                }
                #expect(after.metadata.filter { $0.key.hasSuffix(" ota.deviceinfo") } == before.metadata.filter { $0.key.hasSuffix(" ota.deviceinfo") }, "\(context)")
                // Model oracle: exactly the predicted dataclasses mingled, were committed and hold their adds.
                #expect(Set(answer.commands.filter { $0.name == "sync-commit" }.compactMap(\.uri)) == Set(expected.mingled), "\(context)")
                if expected.mingled.isEmpty {
                    tally.unchanged += 1
                    #expect(after == before, "\(context)")
                } else {
                    tally.synced += 1
                    for dataclass in expected.mingled {
                        // A slow sync starts a new anchor generation.
                        #expect(after.metadata("ota.state.\(dataclass)", device: sender) != before.metadata("ota.state.\(dataclass)", device: sender), "\(context)")
                        let stored = Set(try await probe.harness.serverRecords(dataclass))
                        for record in expected.added[dataclass] ?? [] {
                            #expect(stored.contains(record), "\(context): \(record) missing from \(dataclass)")
                        }
                    }
                }
            }

            // The same bytes again in the session they opened: the same answer, nothing applied twice.
            if let cookie = response.session {
                tally.repeats += 1
                let again = try await probe.post(bytes: bytes, session: cookie)
                #expect(again.status == 200, "\(context)")
                #expect(again.body == response.body, "\(context)")
                #expect(try await probe.snapshot(others: [sender]) == after, "\(context)")
            }
        }
        // The fuzz reached every kind of outcome.
        #expect(tally.refused > 10)
        #expect(tally.unchanged > 10)
        #expect(tally.synced > 10)
        #expect(tally.repeats == tally.unchanged + tally.synced)
    }
}

// MARK: - Sending messages

/// Sends messages to a harness's server as `ada`, in one codec, and reads its answers.
private struct OTAProbe {
    let harness: OTAHarness
    let codec: TestCodec
    let store: any SyncStore
    let transport: any SyncClientTransport
    /// The device whose metadata ``snapshot()`` reads.
    static let device = "fuzz"

    init(codec: TestCodec, harness: OTAHarness = OTAHarness()) {
        self.harness = harness
        self.codec = codec
        self.store = harness.serverStore
        self.transport = harness.loopback
    }

    /// A probe of another server: `store` is its store, reached through `transport`
    /// (``harness`` is then an unrelated one, not to be used).
    init(codec: TestCodec, store: any SyncStore, transport: any SyncClientTransport) {
        self.harness = OTAHarness()
        self.codec = codec
        self.store = store
        self.transport = transport
    }

    /// The patent's media types for the plists, the codec's own for the others.
    var mediaType: String {
        switch codec {
        case .xmlPlist: "text/xml"
        case .binaryPlist: "application/octet-stream"
        case .json, .msgpack: codec.codec.primaryMediaType
        }
    }

    func request(_ bytes: [UInt8], session: String? = nil) -> SyncRequest {
        SyncRequest(
            method: .post, path: "/ota", contentType: mediaType, accept: mediaType, session: session,
            userAgent: "OTAMalformedMessageTests", body: bytes)
    }

    func post(bytes: [UInt8], session: String? = nil) async throws -> SyncResponse {
        try await transport.send(request(bytes, session: session))
    }

    func post(_ message: SyncValue, session: String? = nil) async throws -> SyncResponse {
        try await post(bytes: codec.codec.encode(message), session: session)
    }

    /// The OTA message of an HTTP 200 answer.
    func answer(_ response: SyncResponse, sourceLocation: SourceLocation = #_sourceLocation) throws -> OTAMessage {
        #expect(response.status == 200, "HTTP \(response.status)", sourceLocation: sourceLocation)
        return try OTAMessage(codec.codec.decode(response.body))
    }

    /// The answer to a refused message: HTTP 200, a header `result`, no body.
    func refusal(of response: SyncResponse, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> OTAMessage {
        let answer = try self.answer(response, sourceLocation: sourceLocation)
        #expect(answer.header.result?.count == 1, "\(label): \(String(describing: answer.header.result))", sourceLocation: sourceLocation)
        #expect(answer.body.isEmpty, "\(label)", sourceLocation: sourceLocation)
        return answer
    }

    func exchange(_ message: SyncValue, session: String? = nil) async throws -> (response: SyncResponse, answer: OTAMessage) {
        let response = try await post(message, session: session)
        return (response, try answer(response))
    }

    /// Sends `body` as message 1 of a new session and expects it processed (no header `result`).
    func process(_ body: [SyncValue], sourceLocation: SourceLocation = #_sourceLocation) async throws -> OTAMessage {
        let answer = try self.answer(try await post(Wire.message(body)), sourceLocation: sourceLocation)
        #expect(answer.header.result == nil, "\(String(describing: answer.header.result))", sourceLocation: sourceLocation)
        return answer
    }

    /// Expects each message refused with `status`, and the store untouched by all of them.
    func expectRefused(_ values: [(String, SyncValue)], _ status: OTAStatus, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = try await snapshot()
        for (label, value) in values {
            let answer = try refusal(of: try await post(value), label, sourceLocation: sourceLocation)
            #expect(answer.header.result?.map(\.status) == [status], "\(label)", sourceLocation: sourceLocation)
        }
        #expect(try await snapshot() == before, sourceLocation: sourceLocation)
        try await expectControlChangesData(before, sourceLocation: sourceLocation)
    }

    /// The valid message the malformed ones were made from does change the store:
    /// their leaving it alone is the server's doing.
    func expectControlChangesData(_ before: StoreSnapshot, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let answer = try await process(Wire.validMessage(tag: "control").arrayBody, sourceLocation: sourceLocation)
        #expect(answer.responses.allSatisfy { $0.status?.isSuccess == true }, sourceLocation: sourceLocation)
        let after = try await snapshot()
        #expect(after.records(in: Dataclass.contacts).count > before.records(in: Dataclass.contacts).count, sourceLocation: sourceLocation)
        #expect(after.metadata != before.metadata, sourceLocation: sourceLocation)
    }

    /// The store, with the metadata of the probing device and of `others`.
    func snapshot(others: [String] = []) async throws -> StoreSnapshot {
        try await StoreSnapshot.take(store, devices: [Self.device] + others.filter { $0 != Self.device })
    }
}

/// What the server stores for `ada`: every record with its position, the
/// latest position, and the OTA metadata kept for the probing device.
private struct StoreSnapshot: Equatable {
    var changes: [StoredRecord]
    var latest: ChangePosition
    /// Metadata values by `<device> <key>`.
    var metadata: [String: SyncValue]

    /// The starts of the OTA server's per-device metadata keys the snapshot keeps (`OTADeviceState`, and
    /// every entry of the id map, `ota.idmap␟…`); a session's bookkeeping (`ota.mingled.`, `ota.sessions`)
    /// is left out.
    static let kept = ["ota.state.", "ota.idmap", "ota.conflicts.", "ota.filter.", "ota.deviceinfo"]

    static func take(_ store: any SyncStore, devices: [String]) async throws -> StoreSnapshot {
        let batch = try await store.changes(for: "ada", after: .start, in: nil, limit: 1_000_000)
        #expect(!batch.hasMore)
        let latest = try await store.latestPosition(for: "ada")
        let memory = try #require(store as? MemoryStore, "a snapshot reads every metadata value of a MemoryStore")
        let all = await memory.allMetadata(of: "ada")
        var metadata: [String: SyncValue] = [:]
        for device in devices {
            for (key, value) in all[PeerID("ota-device:\(device)")] ?? [:] where kept.contains(where: { key.hasPrefix($0) }) {
                metadata["\(device) \(key)"] = value
            }
        }
        return StoreSnapshot(changes: batch.records, latest: latest, metadata: metadata)
    }

    func records(in dataclass: String) -> [StoredRecord] {
        changes.filter { $0.record.collection == CollectionID(dataclass) }
    }

    /// Every device's metadata about `dataclass`.
    func metadata(of dataclass: String) -> [String: SyncValue] {
        metadata.filter { $0.key.hasSuffix(".\(dataclass)") || $0.key.contains("\u{1F}\(dataclass)\u{1F}") }
    }

    /// One metadata value of one device.
    func metadata(_ key: String, device: String = OTAProbe.device) -> SyncValue? { metadata["\(device) \(key)"] }
}

private extension OTAMessage {
    /// The first status of the response to command `sequence` named `name`.
    func result(of sequence: Int, _ name: String) -> OTAResult? {
        responses.first { $0.sequence == sequence && $0.name == name }?.results.first
    }
}

extension SyncValue {
    fileprivate var arrayBody: [SyncValue] { self["body"]?.arrayValue ?? [] }
}

// MARK: - Building messages

/// Messages as values, so that they can be built wrong.
private enum Wire {
    static func header(sequence: Int = 1, device: String = OTAProbe.device) -> [String: SyncValue] {
        [
            "version": "1.0", "service": "sync", "userid": "ada", "deviceid": .string(device),
            "sequence": .integer(Int64(sequence)), "final": true,
        ]
    }

    static func message(_ body: [SyncValue], sequence: Int = 1, device: String = OTAProbe.device) -> SyncValue {
        ["header": .dictionary(header(sequence: sequence, device: device)), "body": .array(body)]
    }

    static func command(_ name: String, _ sequence: Int, _ params: [String: SyncValue], more: Bool = false) -> SyncValue {
        var command: [String: SyncValue] = ["name": .string(name), "sequence": .integer(Int64(sequence)), "params": .dictionary(params)]
        if more { command["more"] = true }
        return .dictionary(command)
    }

    /// A slow `sync-start` (a fast one would be refused for lack of a server anchor).
    static func start(_ uri: String, _ sequence: Int, anchors extra: [String: SyncValue] = [:]) -> SyncValue {
        var anchors: [String: SyncValue] = ["mode": "slow", "direction": "twoway", "next_device_anchor": "d.1"]
        anchors.merge(extra) { $1 }
        return command("sync-start", sequence, ["uri": .string(uri), "anchors": .dictionary(anchors)])
    }

    static func changes(_ uri: String, _ sequence: Int, _ items: [String: SyncValue], more: Bool = false) -> SyncValue {
        command("sync-changes", sequence, ["uri": .string(uri), "itemtype": "records", "items": .dictionary(items)], more: more)
    }

    static func add(_ fields: [String: SyncValue], entity: String = Dataclass.contact) -> SyncValue {
        ["op": "add", "entity": .string(entity), "record": .dictionary(fields)]
    }

    /// A complete valid first message: two dataclasses, each started slow with new records, `tag` making them unique.
    static func validMessage(tag: String, header change: (inout [String: SyncValue]) -> Void = { _ in }) -> SyncValue {
        var header = header()
        change(&header)
        let body: [SyncValue] = [
            start(Dataclass.contacts, 1, anchors: ["next_device_anchor": .string("d.\(tag)")]),
            changes(Dataclass.contacts, 2, [
                "L-\(tag)-a": add(["first name": .string("Ada \(tag)"), "age": 36]),
                "L-\(tag)-b": add(["first name": .string("Bo \(tag)"), "emails": ["bo@example.org"]]),
            ]),
            start(Dataclass.calendars, 3),
            changes(Dataclass.calendars, 4, ["E-\(tag)": add(["title": .string("Standup \(tag)")], entity: "com.apple.calendars.Event")]),
        ]
        return ["header": .dictionary(header), "body": .array(body)]
    }
}

// MARK: - Randomized mutations

/// SplitMix64: a small seeded generator, so that every run fuzzes the same messages.
private struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A step into a value: a dictionary key or an array index.
private enum PathStep: Hashable, CustomStringConvertible {
    case key(String)
    case index(Int)

    var description: String {
        switch self {
        case .key(let key): ".\(key)"
        case .index(let index): "[\(index)]"
        }
    }
}

extension SyncValue {
    /// Every path in the value, the root first; dictionary keys in sorted order, so that a seed gives the same paths.
    fileprivate func paths(under prefix: [PathStep] = []) -> [[PathStep]] {
        var paths = [prefix]
        switch self {
        case .dictionary(let dictionary):
            for key in dictionary.keys.sorted() { paths += dictionary[key]!.paths(under: prefix + [.key(key)]) }
        case .array(let array):
            for (index, element) in array.enumerated() { paths += element.paths(under: prefix + [.index(index)]) }
        default:
            break
        }
        return paths
    }

    fileprivate func value(at path: ArraySlice<PathStep>) -> SyncValue? {
        guard let step = path.first else { return self }
        switch (self, step) {
        case (.dictionary(let dictionary), .key(let key)): return dictionary[key]?.value(at: path.dropFirst())
        case (.array(let array), .index(let index)) where array.indices.contains(index): return array[index].value(at: path.dropFirst())
        default: return nil
        }
    }

    /// The value with the one at `path` replaced, or removed when `replacement` is nil.
    fileprivate func replacing(_ path: ArraySlice<PathStep>, with replacement: SyncValue?) -> SyncValue? {
        guard let step = path.first else { return replacement }
        switch (self, step) {
        case (.dictionary(var dictionary), .key(let key)):
            guard let child = dictionary[key] else { return self }
            dictionary[key] = child.replacing(path.dropFirst(), with: replacement)
            return .dictionary(dictionary)
        case (.array(var array), .index(let index)) where array.indices.contains(index):
            if let child = array[index].replacing(path.dropFirst(), with: replacement) {
                array[index] = child
            } else {
                array.remove(at: index)
            }
            return .array(array)
        default:
            return self
        }
    }
}

/// Mutates a valid message the ways a broken or hostile device might.
private enum Mutator {
    static let replacements: [SyncValue] = [
        "not-what-you-expect", 7, .real(2.5), true, [1, "two"], ["x": 1], .data([1, 2, 3]),
        .date(Date(timeIntervalSince1970: 1_000_000_000)),
    ]
    static let unknownNames = ["frobnicate", "SYNC-START", "sync_start", "", "sync-frobnicate", "syncstart"]

    static func mutate(_ message: SyncValue, using random: inout SplitMix64) -> (SyncValue, String) {
        let body = message["body"]?.arrayValue
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            // Drop a key anywhere: a header field, a command's params, an anchor, an item, a record field.
            let paths = message.paths().filter { if case .key? = $0.last { true } else { false } }
            guard let path = paths.randomElement(using: &random) else { break }
            return (message.replacing(path[...], with: nil) ?? message, "drop \(describe(path))")
        case 1:
            // Give a value (possibly the message itself) another type.
            let path = message.paths().randomElement(using: &random)!
            let current = message.value(at: path[...])!
            let replacement = replacements.filter { $0.kind != current.kind }.randomElement(using: &random)!
            return (message.replacing(path[...], with: replacement) ?? replacement, "\(describe(path)) = \(replacement)")
        case 2:
            // Swap the names of two commands.
            guard var body, body.count >= 2 else { break }
            let pair = Array(body.indices.shuffled(using: &random).prefix(2))
            guard let first = body[pair[0]]["name"], let second = body[pair[1]]["name"],
                case .dictionary(var a) = body[pair[0]], case .dictionary(var b) = body[pair[1]]
            else { break }
            a["name"] = second
            b["name"] = first
            body[pair[0]] = .dictionary(a)
            body[pair[1]] = .dictionary(b)
            return (message.replacing([.key("body")], with: .array(body)) ?? message, "swap names of body[\(pair[0])] and body[\(pair[1])]")
        case 3:
            // Insert an unknown command.
            guard var body else { break }
            let name = unknownNames.randomElement(using: &random)!
            let uri = (Dataclass.all + ["com.example.Notes", ""]).randomElement(using: &random)!
            let params: [String: SyncValue] = Bool.random(using: &random) ? ["uri": .string(uri)] : [:]
            let index = Int.random(in: 0...body.count, using: &random)
            body.insert(Wire.command(name, Int.random(in: 1...6, using: &random), params), at: index)
            return (message.replacing([.key("body")], with: .array(body)) ?? message, "insert '\(name)' \(params) at body[\(index)]")
        case 4:
            // Reorder the commands.
            guard var body, body.count >= 2 else { break }
            body.shuffle(using: &random)
            let order = body.map { "\($0["name"].map { "\($0)" } ?? "?")(\($0["params"]?["uri"].map { "\($0)" } ?? "-"))" }
            return (message.replacing([.key("body")], with: .array(body)) ?? message, "reorder to \(order.joined(separator: ", "))")
        case 5:
            // Duplicate a command's sequence number onto another command.
            guard var body, body.count >= 2 else { break }
            let pair = Array(body.indices.shuffled(using: &random).prefix(2))
            guard let sequence = body[pair[0]]["sequence"], case .dictionary(var target) = body[pair[1]], target["sequence"] != nil else { break }
            target["sequence"] = sequence
            body[pair[1]] = .dictionary(target)
            return (message.replacing([.key("body")], with: .array(body)) ?? message, "body[\(pair[1])].sequence = \(sequence)")
        case 7:
            // Insert a stateful command out of its order: the device's sync-commit, or a sync-cancel.
            guard var body else { break }
            let name = ["sync-commit", "sync-cancel"].randomElement(using: &random)!
            let uri = [Dataclass.contacts, Dataclass.calendars].randomElement(using: &random)!
            let index = Int.random(in: 0...body.count, using: &random)
            body.insert(Wire.command(name, Int.random(in: 1...6, using: &random), ["uri": .string(uri)]), at: index)
            return (message.replacing([.key("body")], with: .array(body)) ?? message, "insert \(name) \(uri) at body[\(index)]")
        default:
            // Another message number: a repeat of none, a gap, nonsense.
            guard message["header"]?["sequence"] != nil else { break }
            let sequence = SyncValue.integer([0, -1, 2, 3, 9, 1].randomElement(using: &random)!)
            return (message.replacing([.key("header"), .key("sequence")], with: sequence) ?? message, "header.sequence = \(sequence)")
        }
        return (message, "no-op")
    }

    static func describe(_ path: [PathStep]) -> String { path.isEmpty ? "message" : path.map(\.description).joined() }
}

// MARK: - The oracle

/// Predicts the server's answer to a message from docs/ota.md
/// and the statuses the per-command tests above pin down, for the first
/// message of a new session from a device whose every earlier sync was slow.
///
/// How the data oracle is built: a message changes stored data only through
/// the mingle, which runs at the end of a message once every dataclass the
/// session started has finished its pull phase (its last `sync-changes` was
/// taken) and none is still pulling or waiting for a renegotiation. So:
/// * a refused message (header `result`) changes nothing;
/// * a dataclass whose `sync-start` or `sync-changes` failed before its pull
///   phase finished is not mingled; and when it was started (a `sync-changes`
///   failed, or a fast `sync-start` got `E_NegotiationFailed`), it holds the
///   mingle back for every dataclass of the message, so nothing changes;
/// * a failed `sync-start` leaves no state, so another dataclass that
///   completed in the same message is mingled: "an error somewhere" does not
///   mean "no change" for the whole message, only for that dataclass;
/// * an error after a dataclass finished its pull phase (a second
///   `sync-start`, say) does not stop that dataclass's mingle.
/// The fuzz checks the prediction, and independently of it checks that every
/// dataclass whose `sync-changes` was not answered `S_OK` kept its records and
/// metadata.
private enum OTAOracle {
    struct Expected {
        var name: String
        var sequence: Int
        /// The status; nil when only "an error" is certain.
        var status: OTAStatus?
        var paramName: String?
        var paramKey: String?
        /// Other statuses that are as right as ``status``.
        var alsoAllowed: [OTAStatus] = []

        func check(_ response: OTACommandResponse, _ context: String) {
            #expect(response.name == name, "\(context)")
            #expect(response.sequence == sequence, "\(context)")
            let result = response.results.first
            if let status {
                let allowed = [status] + alsoAllowed
                let comment: Comment = "\(context): \(name) #\(sequence) answered \(String(describing: result)), not one of \(allowed)"
                #expect(allowed.contains { $0 == result?.status }, comment)
            } else {
                #expect(result?.status.isSuccess == false, "\(context): \(name) #\(sequence) answered \(String(describing: result))")
            }
            if let paramName { #expect(result?.paramName == paramName, "\(context): \(String(describing: result))") }
            if let paramKey { #expect(result?.paramKey == paramKey, "\(context): \(String(describing: result))") }
        }
    }

    struct Processed {
        var responses: [Expected] = []
        /// The dataclasses mingled, committed and so changed.
        var mingled: [String] = []
        /// The records each mingled dataclass must hold afterwards.
        var added: [String: [OTARecord]] = [:]
    }

    enum Prediction {
        case refused(OTAStatus)
        case processed(Processed)
    }

    /// What a command did: a status, and the parameter it is about.
    struct Outcome {
        var status: OTAStatus?
        var paramName: String?
        var paramKey: String?
        var isSuccess: Bool { status?.isSuccess == true }

        init(_ status: OTAStatus?, _ paramName: String? = nil, key: String? = nil) {
            self.status = status
            self.paramName = paramName
            self.paramKey = key
        }
    }

    static let dataclasses = Set(Dataclass.all)

    static func predict(_ message: SyncValue) -> Prediction {
        guard let commands = wellFormedCommands(message) else { return .refused(.badRequest) }
        let header = message["header"]!.dictionaryValue!
        guard header["version"] == "1.0" else { return .refused(.versionNotSupported) }
        guard header["userid"] == "ada" else { return .refused(.notAllowed) }
        guard integer(header["sequence"]) == 1 else { return .refused(.stateError) }  // no session yet
        return .processed(run(commands))
    }

    /// An integer, or an integer string (which the server accepts).
    static func integer(_ value: SyncValue?) -> Int? {
        switch value {
        case .integer(let integer)?: Int(exactly: integer)
        case .string(let text)?: Int(text)
        default: nil
        }
    }

    /// The message's commands when it has the shape of a message, else nil (`E_BadRequest`).
    static func wellFormedCommands(_ message: SyncValue) -> [[String: SyncValue]]? {
        guard case .dictionary(let top) = message, Set(top.keys) == ["header", "body"],
            case .dictionary(let header)? = top["header"], case .array(let body)? = top["body"]
        else { return nil }
        for key in ["version", "service", "userid", "deviceid"] {
            guard case .string? = header[key] else { return nil }
        }
        guard let sequence = integer(header["sequence"]), sequence >= 1 else { return nil }
        guard header["msisdn"] == nil || header["msisdn"]?.stringValue != nil, header["final"] == nil || header["final"]?.boolValue != nil,
            header["result"] == nil
        else { return nil }
        var commands: [[String: SyncValue]] = []
        for entry in body {
            guard case .dictionary(let entry) = entry, case .string? = entry["name"],
                let sequence = integer(entry["sequence"]), sequence >= 1,
                entry["params"] == nil || entry["params"]?.dictionaryValue != nil,
                entry["more"] == nil || entry["more"]?.boolValue != nil,
                entry["response"] == nil || entry["response"]?.boolValue != nil
            else { return nil }
            guard entry["response"] != true else { continue }  // the mutations make none
            commands.append(entry)
        }
        return commands
    }

    enum Phase { case negotiationFailed, pulling, pulled, canceled }

    static func run(_ commands: [[String: SyncValue]]) -> Processed {
        var result = Processed()
        var phases: [String: Phase] = [:]
        var directions: [String: String] = [:]
        var failedFamilies: Set<String> = []
        var pending: [String: [OTARecord]] = [:]
        var waiting: [(index: Int, uri: String)] = []
        for command in commands {
            let name = command["name"]!.stringValue!
            let sequence = integer(command["sequence"])!
            let params = command["params"]?.dictionaryValue ?? [:]
            let family = name.hasPrefix("sync-") ? "sync:\(params["uri"]?.stringValue ?? "")" : nil
            func respond(_ outcome: Outcome) {
                result.responses.append(
                    Expected(name: name, sequence: sequence, status: outcome.status, paramName: outcome.paramName, paramKey: outcome.paramKey))
            }
            if let family, failedFamilies.contains(family) {
                respond(Outcome(.commandNotProcessed))
                continue
            }
            let outcome: Outcome
            switch name {
            case "sync-start":
                outcome = start(params, phases: &phases, directions: &directions)
            case "sync-changes":
                var items: [OTARecord] = []
                outcome = changes(params, phases: phases, directions: directions, items: &items)
                if outcome.isSuccess, let uri = params["uri"]?.stringValue, phases[uri] == .pulling {
                    pending[uri, default: []] += items
                    if command["more"] != true {
                        phases[uri] = .pulled
                        waiting.append((result.responses.count, uri))
                    }
                }
            case "sync-commit":
                // Nothing is committed before the server's answer: a device's sync-commit comes too early.
                outcome = validURI(params) ? Outcome(.stateError, "uri") : Outcome(nil)
            case "sync-cancel":
                if !validURI(params) {
                    outcome = Outcome(nil)
                } else if let uri = params["uri"]?.stringValue, phases[uri] != nil {
                    phases[uri] = .canceled
                    pending[uri] = nil
                    outcome = Outcome(.ok)
                } else {
                    outcome = Outcome(.stateError, "uri")
                }
            default:
                outcome = Outcome(.unknownCommand)
            }
            respond(outcome)
            if let family, !outcome.isSuccess { failedFamilies.insert(family) }
        }
        let ready = phases.filter { $0.value == .pulled }.map(\.key).sorted()
        if !ready.isEmpty, !phases.values.contains(where: { $0 == .pulling || $0 == .negotiationFailed }) {
            result.mingled = ready
            // A sync-changes answers S_OK once its dataclass is mingled. One whose dataclass was canceled
            // since was not mingled: S_OK (with a checkpoint anchor) would tell the device its changes are
            // on the server. It stays S_NotCompleted, or says E_Canceled.
            for (index, uri) in waiting {
                if ready.contains(uri) {
                    result.responses[index].status = .ok
                } else {
                    result.responses[index].alsoAllowed = [.canceled]
                }
            }
            for uri in ready { result.added[uri] = pending[uri] ?? [] }
        }
        return result
    }

    /// Whether `uri` names a dataclass synced here. For sync-commit and sync-cancel the fuzz expects
    /// only "an error" otherwise: `commitAndCancelURI` pins down which.
    static func validURI(_ params: [String: SyncValue]) -> Bool {
        params["uri"]?.stringValue.map(dataclasses.contains) ?? false
    }

    static func dataclass(_ params: [String: SyncValue]) -> Result<String, OTAFailure> {
        switch params["uri"] {
        case nil: .failure(OTAFailure(Outcome(.missingParam, "uri")))
        case .string(let uri)?: dataclasses.contains(uri) ? .success(uri) : .failure(OTAFailure(Outcome(.notSupported, "uri")))
        default: .failure(OTAFailure(Outcome(.paramError, "uri")))
        }
    }

    static func start(_ params: [String: SyncValue], phases: inout [String: Phase], directions: inout [String: String]) -> Outcome {
        let uri: String
        switch dataclass(params) {
        case .failure(let failure): return failure.outcome
        case .success(let found): uri = found
        }
        if let phase = phases[uri], phase != .negotiationFailed, phase != .canceled { return Outcome(.stateError, "uri") }
        var mode = "fast"
        var direction = "twoway"
        switch params["anchors"] {
        case nil:
            break
        case .dictionary(let anchors)?:
            if let value = anchors["mode"] {
                guard case .string(let name) = value else { return Outcome(.paramError, "anchors", key: "mode") }
                guard ["fast", "slow", "reset"].contains(name) else { return Outcome(.badValue, "anchors", key: "mode") }
                mode = name
            }
            if let value = anchors["direction"] {
                guard case .string(let name) = value else { return Outcome(.paramError, "anchors", key: "direction") }
                guard ["twoway", "to_server", "to_device"].contains(name) else { return Outcome(.notSupported, "anchors", key: "direction") }
                direction = name
            }
            for key in ["device_version", "server_version", "last_device_anchor", "next_device_anchor", "last_server_anchor", "next_server_anchor"] {
                if let value = anchors[key], value.stringValue == nil { return Outcome(.paramError, "anchors", key: key) }
            }
            if let version = anchors["server_version"], version != "1.0" { return Outcome(.versionNotSupported, "anchors") }
        default:
            return Outcome(.paramError, "anchors")
        }
        // The device has no server anchor (it never sends one here): a fast sync is renegotiated as slow.
        if mode == "fast" {
            phases[uri] = .negotiationFailed
            return Outcome(.negotiationFailed)
        }
        phases[uri] = .pulling
        directions[uri] = direction
        return Outcome(.ok)
    }

    static func changes(
        _ params: [String: SyncValue], phases: [String: Phase], directions: [String: String], items records: inout [OTARecord]
    ) -> Outcome {
        let uri: String
        switch dataclass(params) {
        case .failure(let failure): return failure.outcome
        case .success(let found): uri = found
        }
        guard let phase = phases[uri], phase != .negotiationFailed, phase != .canceled else { return Outcome(.stateError, "uri") }
        let itemType: String
        switch params["itemtype"] {
        case nil: itemType = "records"
        case .string(let name)?:
            guard ["records", "changes"].contains(name) else { return Outcome(.badValue, "itemtype") }
            itemType = name
        default: return Outcome(.paramError, "itemtype")
        }
        let items: [String: SyncValue]
        switch params["items"] {
        case nil: return Outcome(.missingParam, "items")
        case .dictionary(let dictionary)?: items = dictionary
        default: return Outcome(.paramError, "items")
        }
        for key in items.keys.sorted() {
            switch item(items[key]!, key: key, itemType: itemType) {
            case .failure(let failure): return failure.outcome
            case .success(let record): if let record { records.append(record) }
            }
        }
        guard params["idmap"] == nil else { return Outcome(nil) }  // the mutations make none
        if phase == .pulled {
            return items.isEmpty ? Outcome(.ok) : Outcome(.stateError, "items")
        }
        if directions[uri] == "to_device", !items.isEmpty { return Outcome(.notAllowed, "items") }
        return Outcome(.notCompleted)
    }

    /// An item's record (nil for a delete), or the error it gets: `param-name` items, `param-key` its id.
    static func item(_ value: SyncValue, key: String, itemType: String) -> Result<OTARecord?, OTAFailure> {
        func error(_ status: OTAStatus?) -> Result<OTARecord?, OTAFailure> { .failure(OTAFailure(Outcome(status, "items", key: key))) }
        guard case .dictionary(let item) = value else { return error(.paramError) }
        guard let opValue = item["op"] else { return error(.missingParam) }
        guard case .string(let op) = opValue else { return error(.paramError) }
        guard ["add", "modify", "delete"].contains(op) else { return error(.badValue) }
        let entity: String?
        switch item["entity"] {
        case nil: entity = nil
        case .string(let name)?: entity = name
        default: return error(.paramError)
        }
        if let conflict = item["conflict"], conflict.dictionaryValue == nil { return error(.paramError) }
        guard op != "delete" else { return .success(nil) }
        guard entity != nil || op == "modify" else { return error(.missingParam) }
        guard itemType == "records" else { return .success(nil) }
        switch item["record"] {
        case nil: return error(.missingParam)
        case .dictionary(let fields)?: return .success(op == "add" ? OTARecord(entity: entity!, fields: fields) : nil)
        default: return error(.paramError)
        }
    }
}

/// A predicted command failure, as an `Error` for `Result`.
private struct OTAFailure: Error {
    var outcome: OTAOracle.Outcome
    init(_ outcome: OTAOracle.Outcome) { self.outcome = outcome }
}
