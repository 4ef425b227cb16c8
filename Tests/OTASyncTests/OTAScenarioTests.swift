import Foundation
import OTASync
import SyncCore
import SyncTesting
import SyncXMLPlist
import TestSupport
import Testing

/// The patent's scenarios, in process and over HTTP; those that cut sessions with faults, in process.
@Suite("OTA scenarios")
struct OTAScenarioTests {
    @Test("three dataclasses in parallel; the server resets one and splits its changes across messages", arguments: TransportRoute.allCases)
    func parallelDataclassesWithServerReset(route: TransportRoute) async throws {
        let harness = OTAHarness(maxMessageBytes: 8 * 1024)
        try await harness.withTransport(route) { transport in
            let trace = TraceRecorder()
            let phone = harness.device("phone", through: transport.with(trace), maxMessageBytes: 8 * 1024)
            let laptop = harness.device("laptop", through: transport, maxMessageBytes: 8 * 1024)
            for index in 0..<16 {
                try await laptop.add(["title": .string("event \(index)"), "notes": .string(String(repeating: "x", count: 200))], in: Dataclass.calendars)
            }
            try await laptop.add(["first name": "Ada"])
            try await laptop.add(["url": "https://example.com"], in: Dataclass.bookmarks)
            try await laptop.sync()
            try await phone.sync()
            // The phone holds an event the server never saw; a reset drops it.
            try await phone.records.save(dataclass: Dataclass.calendars, luid: "stray", entity: "event", fields: ["title": "stray"])
            try await phone.add(["first name": "Grace"])
            try await harness.server.requestReset(Dataclass.calendars, account: harness.account, device: "phone")

            trace.reset()
            let report = try await phone.sync()
            #expect(report.modes[Dataclass.calendars] == .reset)
            #expect(report.modes[Dataclass.contacts] == .fast)
            #expect(report.modes[Dataclass.bookmarks] == .fast)

            // The patent's three round trips.
            let answers = try trace.exchanges.map { try OTAMessage(XMLPlistCodec().decode($0.response.body)) }
            #expect(answers.count == 3)
            guard answers.count == 3 else { return }
            func statuses(_ message: OTAMessage, _ name: String) -> [String: OTAStatus] {
                Dictionary(uniqueKeysWithValues: message.responses.filter { $0.name == name }.compactMap { response in
                    response.uri.flatMap { uri in response.status.map { (uri, $0) } }
                })
            }
            // 1: calendars must reset, so its changes are not processed; the others wait for it.
            #expect(statuses(answers[0], "sync-start") == [
                Dataclass.contacts: .ok, Dataclass.calendars: .negotiationFailed, Dataclass.bookmarks: .ok,
            ])
            #expect(statuses(answers[0], "sync-changes") == [
                Dataclass.contacts: .notCompleted, Dataclass.calendars: .commandNotProcessed, Dataclass.bookmarks: .notCompleted,
            ])
            #expect(answers[0].responses.first { $0.uri == Dataclass.calendars && $0.name == "sync-start" }?.params["anchors"]?["mode"] == "reset")
            #expect(answers[0].commands.isEmpty && !answers[0].header.isFinal)
            // 2: all three mingled together; contacts and bookmarks commit, calendars' changes are split.
            let pushed = answers[1].commands.filter { $0.name == "sync-changes" }
            #expect(Set(pushed.compactMap(\.uri)) == Set(Dataclass.all))
            #expect(pushed.first { $0.uri == Dataclass.calendars }?.more == true)
            #expect(Set(answers[1].commands.filter { $0.name == "sync-commit" }.compactMap(\.uri)) == [Dataclass.contacts, Dataclass.bookmarks])
            #expect(!answers[1].header.isFinal)
            // 3: the rest of calendars, its commit, and the end.
            #expect(answers[2].commands.map(\.name) == ["sync-changes", "sync-commit"])
            #expect(answers[2].header.isFinal)

            #expect(try await phone.contents(Dataclass.calendars) == laptop.contents(Dataclass.calendars))
            #expect(try await phone.contents(Dataclass.calendars).count == 16)
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 2)
            #expect(try await phone.sync().modes[Dataclass.calendars] == .fast)
        }
    }

    @Test("the first sync asks for the device's info; put deviceinfo updates it", arguments: TransportRoute.allCases)
    func deviceInfo(route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
            let phone = harness.device("phone", through: transport)
            try await phone.sync()
            let info = try await harness.server.deviceInfo(account: harness.account, device: "phone")
            #expect(info?["model"] == "Anchorage")
        }
    }

    @Test("a deferred idmap arrives with the next session; the device's edit of that record is not a duplicate", arguments: TransportRoute.allCases)
    func deferredIDMap(route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
            let laptop = harness.device("laptop", through: transport)
            let phone = harness.device("phone", through: transport, defersIDMap: true)
            try await laptop.add(["first name": "Ada"])
            try await laptop.sync()
            try await phone.sync()
            let luid = try #require(try await phone.records.records(dataclass: Dataclass.contacts).keys.first)
            try await phone.records.save(dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["first name": "Ada B."])
            try await phone.sync()
            #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["first name": "Ada B."]])
            try await laptop.sync()
            #expect(try await laptop.contents() == phone.contents())
        }
    }

    @Test("an idmap answered at once (not deferred) reaches the server in the same session", arguments: TransportRoute.allCases)
    func immediateIDMap(route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
            let laptop = harness.device("laptop", through: transport)
            let traffic = CountingMiddleware()
            let phone = harness.device("phone", through: transport.with(traffic), defersIDMap: false)
            try await laptop.add(["first name": "Ada"])
            try await laptop.sync()
            try await phone.sync()
            try await laptop.add(["first name": "Alan"])
            try await laptop.sync()
            traffic.reset()
            try await phone.sync()
            #expect(traffic.total.requests == 2)  // the changes, then the idmap answering the final message
            let luid = try #require(try await phone.records.records(dataclass: Dataclass.contacts).first { $0.value.fields["first name"] == "Alan" }?.key)
            try await phone.records.save(dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["first name": "Alan T."])
            try await phone.sync()
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 2)
        }
    }

    @Test("a conflict goes to the device; the user's choice comes back in the next session", arguments: TransportRoute.allCases)
    func conflictResolvedOnDevice(route: TransportRoute) async throws {
        let harness = OTAHarness(policy: DeferredPolicy { _ in .deferred })
        try await harness.withTransport(route) { transport in
            let phone = harness.device("phone", through: transport)
            let laptop = harness.device("laptop", through: transport)
            let (luid, _) = try await OTAJournalTests.editedOnBoth(phone: phone, laptop: laptop)
            let report = try await phone.sync()
            #expect(report.conflicts == 1 && report.openConflicts == 1)
            // The server's version waits beside the phone's, which the record keeps until the user answers.
            #expect(try await phone.records.records(dataclass: Dataclass.contacts)[luid]?.fields == ["first name": "Ada (phone)"])
            let conflict = try #require(try await phone.records.store.openConflicts(for: harness.account).first)
            #expect(conflict.local.fields == ["first name": "Ada (phone)"] && conflict.remote.fields == ["first name": "Ada (laptop)"])
            #expect(conflict.base?.fields == ["first name": "Ada"])

            try await phone.records.store.answerConflict(conflict.id, with: .keepMine, for: harness.account)
            try await phone.sync()
            try await laptop.sync()
            #expect(try await phone.records.store.openConflicts(for: harness.account).isEmpty)
            #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["first name": "Ada (phone)"]])
            #expect(try await laptop.contents() == phone.contents())
        }
    }

    @Test("a session cut after each message in turn resumes from its checkpoint: no slow sync, nothing lost or duplicated")
    func cutAfterEachMessage() async throws {
        // How many messages an uncut session of this size takes.
        let reference = try await Self.cutSession(cutAt: nil)
        #expect(reference.messages > 3)
        for cut in 0..<reference.messages {
            let outcome = try await Self.cutSession(cutAt: cut)
            #expect(outcome.cuts == 1, "cut after message \(cut + 1)")
            #expect(outcome.slowAfterCut == false, "cut after message \(cut + 1)")
            #expect(outcome.converged, "cut after message \(cut + 1)")
        }
    }

    /// Syncs a phone with 30 new contacts and a laptop with 30 others under a small message
    /// limit, cutting the phone's session after the server processed message `cutAt` (0-based).
    static func cutSession(cutAt: Int?) async throws -> (messages: Int, cuts: Int, slowAfterCut: Bool, converged: Bool) {
        let limit = 6 * 1024
        let harness = OTAHarness(maxMessageBytes: limit)
        let laptop = harness.device("laptop", maxMessageBytes: limit)
        let faults = FaultInjectingMiddleware(
            plan: .scripted(cutAt.map { Array(repeating: nil, count: $0) + [.cutAfterProcessing] } ?? []))
        let traffic = CountingMiddleware()
        let phoneStore = MemoryStore()
        try await harness.device("phone", store: phoneStore, maxMessageBytes: limit).sync()
        let phone = harness.device(
            "phone", through: harness.loopback.with(faults).with(traffic), store: phoneStore, maxMessageBytes: limit,
            retries: 0)
        try await laptop.sync()
        for index in 0..<30 {
            try await phone.add(["first name": .string("Phone \(index)"), "notes": .string(String(repeating: "p", count: 150))])
            try await laptop.add(["first name": .string("Laptop \(index)"), "notes": .string(String(repeating: "l", count: 150))])
        }
        try await laptop.sync()
        traffic.reset()
        var slow = false
        do {
            try await phone.sync()
        } catch {
            let resumed = try await phone.sync()
            slow = resumed.modes.values.contains(.slow)
        }
        let messages = traffic.total.requests
        try await laptop.sync()
        let server = sorted(try await harness.serverRecords(Dataclass.contacts))
        let phoneRecords = try await phone.contents()
        let laptopRecords = try await laptop.contents()
        let converged = phoneRecords == server && laptopRecords == server && server.count == 60
        return (messages, faults.counts.cutAfterProcessing, slow, converged)
    }

    @Test("a retransmitted message is answered again from the cache and applied once")
    func retransmittedMessage() async throws {
        let harness = OTAHarness()
        let faults = FaultInjectingMiddleware(plan: .scripted([.cutAfterProcessing]))
        let traffic = CountingMiddleware()
        let phoneStore = MemoryStore()
        try await harness.device("phone", store: phoneStore).sync()
        let phone = harness.device("phone", through: harness.loopback.with(traffic).with(faults), store: phoneStore, retries: 1)
        try await phone.add(["first name": "Ada"])
        traffic.reset()
        let report = try await phone.sync()
        #expect(traffic.total.requests == 2)  // the message, then the same bytes again
        #expect(report.sentItems == 1)
        #expect(faults.counts.cutAfterProcessing == 1)
        #expect(try await harness.serverRecords(Dataclass.contacts).count == 1)
        #expect(try await harness.serverStore.latestPosition(for: harness.account) == ChangePosition(1))
    }
}

@Suite("OTA filters")
struct OTAFilterTests {
    @Test("a device's filter decides what the server sends; a new filter drops what it no longer admits", arguments: TransportRoute.allCases)
    func filterEnforced(route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
            let laptop = harness.device("laptop", through: transport)
            let phone = harness.device("phone", through: transport)
            try await laptop.add(["first name": "Ada", "container": "family"])
            try await laptop.add(["first name": "Alan", "container": "work"])
            try await laptop.add(["first name": "Old", "container": "family", "date": .date(Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 90 * 86_400).rounded(.down)))])
            try await laptop.sync()

            try await phone.client.setFilter(
                OTADataclassFilter(defaultContainer: "family", constrainContainers: ["family"], discardAfterDays: 30),
                for: Dataclass.contacts)
            try await phone.sync()
            #expect(try await phone.contents().map { $0.fields["first name"] } == ["Ada"])

            // What the phone adds without a container goes into the default one.
            try await phone.add(["first name": "Grace"])
            try await phone.sync()
            #expect(try await harness.serverRecords(Dataclass.contacts).first { $0.fields["first name"] == "Grace" }?.fields["container"] == "family")

            try await phone.client.setFilter(OTADataclassFilter(constrainContainers: ["work"]), for: Dataclass.contacts)
            let resync = try await phone.sync()
            #expect(resync.modes[Dataclass.contacts] == .slow)
            #expect(try await phone.contents().map { $0.fields["first name"] } == ["Alan"])
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 4)

            let refusal = await #expect(throws: SyncClientError.self) {
                try await phone.client.setFilter(OTADataclassFilter(constrainContainers: ["x"]), for: "com.apple.Notes")
            }
            #expect(refusal?.code == .refused && refusal?.stack == "ota", "\(String(describing: refusal))")
            #expect(refusal?.status == OTAStatus.notFound.code && refusal?.reason != nil, "\(String(describing: refusal))")
        }
    }
}

@Suite("OTA changes sent again")
struct OTASentAgainTests {
    @Test("a change sent again after a cut between the mingle and its answer does not overwrite a newer change")
    func sentAgainAfterCut() async throws {
        let harness = OTAHarness()
        let phoneStore = MemoryStore()
        let phone = harness.device("phone", store: phoneStore)
        let laptop = harness.device("laptop")
        let luid = try await phone.add(["first name": "Ada"])
        try await phone.sync()
        try await laptop.sync()

        try await phone.records.save(dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["first name": "Ada (phone)"])
        let faults = FaultInjectingMiddleware(plan: .scripted([.cutAfterProcessing]))
        let cut = harness.device("phone", through: harness.loopback.with(faults), store: phoneStore, retries: 0)
        await #expect(throws: SyncClientError.self) { try await cut.sync() }
        #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["first name": "Ada (phone)"]])

        let laptopID = try #require(try await laptop.records.records(dataclass: Dataclass.contacts).keys.first)
        try await laptop.records.save(dataclass: Dataclass.contacts, luid: laptopID, entity: Dataclass.contact, fields: ["first name": "Ada (laptop)"])
        try await laptop.sync()

        let resumed = try await phone.sync()
        #expect(resumed.modes[Dataclass.contacts] == .fast)
        #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["first name": "Ada (laptop)"]])
        #expect(try await phone.records.records(dataclass: Dataclass.contacts)[luid]?.fields == ["first name": "Ada (laptop)"])

        // A new edit on the phone after that still travels.
        try await phone.records.save(dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["first name": "Ada (phone, later)"])
        try await phone.sync()
        #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["first name": "Ada (phone, later)"]])
    }
}

@Suite("OTA field-level changes from a device")
struct OTADeviceFieldLevelTests {
    @Test("a device set to FLD sends only the fields it changed and those it cleared; the photo stays home", arguments: TestCodec.allCases, TransportRoute.allCases)
    func deviceSendsFieldChanges(codec: TestCodec, route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
            let trace = TraceRecorder()
            let photo = SyncValue.data(Array(repeating: 0xAB, count: 40_000))
            let phone = harness.device("phone", codec: codec, through: transport.with(trace), itemType: .changes)
            let laptop = harness.device("laptop", codec: codec, through: transport, itemType: .changes)
            let luid = try await phone.add(["first name": "Ada", "city": "London", "photo": photo])
            try await phone.sync()
            try await laptop.sync()

            try await phone.records.save(
                dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["first name": "Ada L.", "photo": photo])
            trace.reset()
            let report = try await phone.sync()
            #expect(report.sentItems == 1)
            let request = try #require(trace.exchanges.first?.request)
            #expect(request.body.count < 4_000)
            let sent = try OTAMessage(codec.codec.decode(request.body)).commands.first { $0.name == "sync-changes" }
            #expect(sent?.params["itemtype"] == "changes")
            let item = try #require(sent?.params["items"]?[luid])
            #expect(item["changes"] == ["first name": "Ada L."])
            #expect(item["removed"] == ["city"])

            // JSON carries data as base64 text.
            let expectedPhoto: SyncValue = codec == .json ? .string(Data(Array(repeating: 0xAB, count: 40_000)).base64EncodedString()) : photo
            #expect(try await harness.serverRecords(Dataclass.contacts).map(\.fields) == [["first name": "Ada L.", "photo": expectedPhoto]])
            try await laptop.sync()
            #expect(try await laptop.contents().map(\.fields) == [["first name": "Ada L.", "photo": expectedPhoto]])

            // The laptop's own field change comes back to the phone, and an unchanged save sends nothing.
            let laptopID = try #require(try await laptop.records.records(dataclass: Dataclass.contacts).keys.first)
            try await laptop.records.save(
                dataclass: Dataclass.contacts, luid: laptopID, entity: Dataclass.contact,
                fields: ["first name": "Ada L.", "photo": expectedPhoto, "city": "Paris"])
            try await laptop.sync()
            try await phone.sync()
            #expect(try await phone.records.records(dataclass: Dataclass.contacts)[luid]?.fields["city"] == "Paris")
            let current = try #require(try await phone.records.records(dataclass: Dataclass.contacts)[luid])
            try await phone.records.save(dataclass: Dataclass.contacts, luid: luid, entity: current.entity, fields: current.fields)
            #expect(try await phone.sync().sentItems == 0)
        }
    }
}

@Suite("OTA directions")
struct OTADirectionTests {
    @Test("a to_device dataclass only receives and keeps its edits for later; a to_server one only sends", arguments: TransportRoute.allCases)
    func directions(route: TransportRoute) async throws {
        let harness = OTAHarness()
        try await harness.withTransport(route) { transport in
            let laptop = harness.device("laptop", through: transport)
            try await laptop.add(["first name": "Ada"])
            try await laptop.sync()

            let kioskStore = MemoryStore()
            let kioskRecords = OTADeviceRecords(store: kioskStore, account: harness.account)
            func kiosk(_ direction: OTADirection) -> OTAClient {
                OTAClient(
                    records: kioskRecords, deviceID: "kiosk", transport: transport, codec: XMLPlistCodec(),
                    dataclasses: [Dataclass.contacts], configuration: .init(directions: [Dataclass.contacts: direction]))
            }
            try await kioskRecords.save(dataclass: Dataclass.contacts, entity: Dataclass.contact, fields: ["first name": "Kiosk"])
            let received = try await kiosk(.toDevice).sync()
            #expect(received.sentItems == 0)
            #expect(try await kioskRecords.records(dataclass: Dataclass.contacts).count == 2)
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 1)

            // Two-way later: the edit kept on the kiosk goes up.
            try await kiosk(.twoWay).sync()
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 2)

            try await laptop.add(["first name": "Grace"])
            try await laptop.sync()
            try await kioskRecords.save(dataclass: Dataclass.contacts, entity: Dataclass.contact, fields: ["first name": "Kiosk 2"])
            let sent = try await kiosk(.toServer).sync()
            #expect(sent.sentItems == 1)
            #expect(sent.receivedItems == 0)
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 4)
            #expect(try await kioskRecords.records(dataclass: Dataclass.contacts).count == 3)

            // What the kiosk did not receive then comes with the next two-way sync.
            let caughtUp = try await kiosk(.twoWay).sync()
            #expect(caughtUp.receivedItems == 1)
            #expect(try await kioskRecords.records(dataclass: Dataclass.contacts).count == 4)
        }
    }
}
