import Foundation
import OTASync
import SyncCore
import SyncXMLPlist
import TestSupport
import Testing

@Suite("OTA message layer")
struct OTAMessageTests {
    /// A message with every kind of entry and optional key.
    static let sample = OTAMessage(
        header: OTAHeader(userid: "ada", deviceid: "phone-1", sequence: 3, msisdn: "+15550100", isFinal: true),
        body: [
            .command(OTACommand(
                name: "sync-start", sequence: 5,
                params: ["uri": "com.apple.Contacts", "anchors": OTAAnchors(mode: .slow, direction: .toServer, lastServerAnchor: "g1.9").value])),
            .command(OTACommand(
                name: "sync-changes", sequence: 6, params: ["uri": "com.apple.Contacts", "items": ["L1": OTAItem.delete().value]],
                more: true)),
            .response(OTACommandResponse(
                name: "sync-changes", sequence: 2, params: ["uri": "com.apple.Calendars"],
                results: [OTAResult(.multiStatus), OTAResult(.badValue, "no", paramName: "items", paramIndex: 2, paramKey: "L9")])),
        ])

    @Test("a message survives every codec as the same value and the same typed message", arguments: TestCodec.allCases)
    func roundTrip(codec: TestCodec) throws {
        let bytes = try codec.codec.encode(Self.sample.value)
        #expect(try OTAMessage(codec.codec.decode(bytes)) == Self.sample)
    }

    @Test("an XML plist message is a plist Foundation reads, with the keys docs/ota.md names")
    func foundationReadsXML() throws {
        let bytes = try XMLPlistCodec().encode(Self.sample.value)
        let plist = try #require(try PropertyListSerialization.propertyList(from: Data(bytes), format: nil) as? [String: Any])
        #expect(Set(plist.keys) == ["header", "body"])
        let header = try #require(plist["header"] as? [String: Any])
        #expect(header["sequence"] as? Int == 3)
        #expect(header["final"] as? Bool == true)
        let body = try #require(plist["body"] as? [[String: Any]])
        #expect(body[1]["more"] as? Bool == true)
        let result = try #require((body[2]["result"] as? [[String: Any]])?.last)
        #expect(result["code"] as? Int == 607)
        #expect(result["param-key"] as? String == "L9")
    }

    @Test("the status table: names and codes both ways, successes and errors")
    func statusTable() {
        #expect(OTAStatus.table.count == 22)
        #expect(Set(OTAStatus.table.map(\.code)).count == OTAStatus.table.count)
        for (name, code) in OTAStatus.table {
            #expect(OTAStatus(named: name)?.code == code)
            #expect(OTAStatus(code: code)?.name == name)
            #expect(OTAStatus(named: name)?.isSuccess == name.hasPrefix("S_"))
        }
        #expect(OTAStatus.badValue.code == 607)
        #expect(OTAStatus(code: 999) == nil)
    }

    @Test("a status code written as an integer string is accepted on input")
    func codeAsString() throws {
        var value = Self.sample.value
        guard case .dictionary(var top) = value, case .array(var body) = top["body"], case .dictionary(var response) = body[2]
        else { Issue.record("the sample changed shape"); return }
        response["result"] = [["status": "S_OK", "code": "600"]]
        body[2] = .dictionary(response)
        top["body"] = .array(body)
        value = .dictionary(top)
        #expect(try OTAMessage(value).responses.first?.status == .ok)
    }

    @Test("RLD replaces the fields but keeps those sent as +**no-change**+; FLD changes and removes")
    func itemsApply() throws {
        let stored: [String: SyncValue] = ["name": "Ada", "photo": .data([1, 2, 3]), "city": "London"]
        let rld = try OTAItem(
            ["op": "modify", "entity": "contact", "record": ["name": "Ada L.", "photo": OTAItem.noChange]], key: "L1", itemType: .records)
        #expect(rld.applied(to: stored) == ["name": "Ada L.", "photo": .data([1, 2, 3])])
        let fld = try OTAItem(
            ["op": "modify", "changes": ["name": "Ada K."], "removed": ["city"]], key: "L1", itemType: .changes)
        #expect(fld.applied(to: stored) == ["name": "Ada K.", "photo": .data([1, 2, 3])])
    }

    @Test("anchors: modes, directions and versions round-trip; an unknown mode or direction names the key")
    func anchors() throws {
        let anchors = OTAAnchors(
            mode: .reset, direction: .toDevice, deviceVersion: "2", serverVersion: "1.0", lastDeviceAnchor: "d.1",
            nextDeviceAnchor: "d.2", lastServerAnchor: "g.4", nextServerAnchor: "g.5")
        #expect(try OTAAnchors(anchors.value) == anchors)
        #expect(throws: OTAMessageError(OTAResult(.badValue, "unknown mode 'quick'; use fast, slow or reset", paramName: "anchors", paramKey: "mode"))) {
            try OTAAnchors(["mode": "quick"])
        }
        do {
            _ = try OTAAnchors(["direction": "sideways"])
            Issue.record("an unknown direction was accepted")
        } catch {
            #expect(error.result.status == .notSupported)
            #expect(error.result.paramKey == "direction")
        }
    }

    @Test("a filter reads and writes its three keys and decides what a device holds")
    func filter() throws {
        let filter = try OTADataclassFilter(["constrain_containers": ["family"], "discard_after_days": 7, "default_container": "family"])
        #expect(try OTADataclassFilter(filter.value) == filter)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(filter.admits(["container": "family"], now: now))
        #expect(!filter.admits(["container": "work"], now: now))
        #expect(!filter.admits(["container": "family", "date": .date(now.addingTimeInterval(-8 * 86_400))], now: now))
        #expect(filter.admits(["container": "family", "date": .date(now.addingTimeInterval(-6 * 86_400))], now: now))
        #expect(throws: OTAMessageError.self) { try OTADataclassFilter(["discard_after_days": "seven"]) }
    }
}

@Suite("OTA field-level changes on the server")
struct OTAFieldLevelTests {
    @Test("a device's FLD item changes and removes fields of the server's record; +**no-change**+ keeps a field")
    func fieldLevelChanges() async throws {
        let harness = OTAHarness()
        let laptop = harness.device("laptop")
        try await laptop.add(["name": "Ada", "city": "London", "photo": .data([9, 9])])
        try await laptop.sync()
        let uuid = try await harness.serverStore.transaction(for: harness.account) { tx in
            try await tx.records(in: CollectionID(Dataclass.contacts), after: nil, limit: 10)[0].record.id.rawValue
        }
        let context = ServiceContext(account: harness.account)
        func send(_ sequence: Int, _ body: [OTABodyEntry], session: String?) async throws -> (OTAMessage, String?) {
            let message = OTAMessage(header: OTAHeader(userid: "ada", deviceid: "tool", sequence: sequence), body: body)
            let response = try await harness.server.handle(
                SyncRequest(method: .post, path: "/ota", contentType: "text/xml", session: session, body: try XMLPlistCodec().encode(message.value)),
                context: context)
            return (try OTAMessage(XMLPlistCodec().decode(response.body)), response.session)
        }
        // A device that uses the server's ids (no id map) edits the record field by field.
        let (first, session) = try await send(1, [
            .command(OTACommand(name: "sync-start", sequence: 1, params: ["uri": .string(Dataclass.contacts), "anchors": ["mode": "slow"]])),
            .command(OTACommand(name: "sync-changes", sequence: 2, params: ["uri": .string(Dataclass.contacts), "items": [:]])),
        ], session: nil)
        #expect(first.responses.map(\.status) == [.ok, .ok])
        let (second, _) = try await send(2, [
            .command(OTACommand(name: "sync-changes", sequence: 3, params: [
                "uri": .string(Dataclass.contacts), "itemtype": "changes",
                "items": .dictionary([uuid: ["op": "modify", "changes": ["name": "Ada L.", "photo": OTAItem.noChange], "removed": ["city"]]]),
            ])),
        ], session: session)
        // The pull phase of this session is over: further items are a state error, and nothing changes.
        #expect(second.responses.first?.status == .stateError)
        #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["name": "Ada", "city": "London", "photo": .data([9, 9])]])

        let (fast, _) = try await send(1, [
            .command(OTACommand(name: "sync-start", sequence: 1, params: [
                "uri": .string(Dataclass.contacts),
                "anchors": ["mode": "fast", "last_server_anchor": try #require(first.commands.last?.params["anchors"]?["next_server_anchor"])],
            ])),
            .command(OTACommand(name: "sync-changes", sequence: 2, params: [
                "uri": .string(Dataclass.contacts), "itemtype": "changes",
                "items": .dictionary([uuid: ["op": "modify", "changes": ["name": "Ada L.", "photo": OTAItem.noChange], "removed": ["city"]]]),
            ])),
        ], session: nil)
        #expect(fast.responses.map(\.status) == [.ok, .ok])
        #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["name": "Ada L.", "photo": .data([9, 9])]])
    }
}
