import NotesStack
import SyncCore
import SyncJSON
import SyncTesting
import Testing

@Suite("Two devices sync notes through the server, in process and over HTTP")
struct NotesSyncTests {
    @Test("a new note, an edit on each side (a conflict, merged) and a deletion converge", arguments: TransportRoute.allCases)
    func devicesConverge(route: TransportRoute) async throws {
        let harness = NotesHarness()
        try await harness.withTransport(route) { transport in
            let phone = harness.device("phone", transport)
            let laptop = harness.device("laptop", transport)

            let groceries = try await phone.save(title: "Groceries", text: "milk")
            let ideas = try await laptop.save(title: "Ideas", text: "a fourth stack")
            #expect(try await phone.sync() == .init(pushed: 1, pulled: 0, conflicts: 0))
            #expect(try await laptop.sync() == .init(pushed: 1, pulled: 1, conflicts: 0))
            #expect(try await phone.sync() == .init(pushed: 0, pulled: 1, conflicts: 0))
            #expect(try await phone.notes().map(\.title).sorted() == ["Groceries", "Ideas"])
            #expect(try await phone.notes() == laptop.notes())

            // Both edit the groceries before they sync again: the laptop's edit is based on a
            // revision the server has moved past, so the server's policy decides.
            harness.tick()
            try await phone.save(id: groceries, title: "Groceries", text: "milk, eggs")
            harness.tick()
            try await laptop.save(id: groceries, title: "Shopping", text: "milk, bread")
            #expect(try await phone.sync().conflicts == 0)
            #expect(try await laptop.sync().conflicts == 1)
            #expect(try await phone.sync().pulled == 1)
            for device in [phone, laptop] {
                let note = try #require(try await device.note(groceries))
                #expect(note.title == "Shopping")  // the newer title
                #expect(note.text == "milk, eggs\n\nmilk, bread")  // both texts, the older first
            }

            // A deletion travels like any change.
            harness.tick()
            try await laptop.delete(ideas)
            try await laptop.sync()
            try await phone.sync()
            #expect(try await phone.note(ideas)?.isDeleted == true)
            #expect(try await phone.notes().map(\.title) == ["Shopping"])
            #expect(try await phone.notes() == laptop.notes())

            // Nothing is left to send or to take.
            #expect(try await phone.sync() == .init(pushed: 0, pulled: 0, conflicts: 0))
            #expect(try await laptop.sync() == .init(pushed: 0, pulled: 0, conflicts: 0))
        }
    }

    @Test("with .serverWins the later device takes the server's note and sends nothing more", arguments: TransportRoute.allCases)
    func serverWins(route: TransportRoute) async throws {
        let harness = NotesHarness(policy: .serverWins)
        try await harness.withTwoDevices(route, sharing: "first draft") { phone, laptop, id in
            harness.tick()
            try await phone.save(id: id, title: "Shared", text: "phone's draft")
            try await laptop.save(id: id, title: "Shared", text: "laptop's draft")
            try await phone.sync()
            #expect(try await laptop.sync().conflicts == 1)
            #expect(try await laptop.note(id)?.text == "phone's draft")
            #expect(try await laptop.sync() == .init(pushed: 0, pulled: 0, conflicts: 0))
        }
    }

    @Test("an edit wins over a deletion made on another device")
    func editBeatsDeletion() async throws {
        let harness = NotesHarness()
        try await harness.withTwoDevices(.loopback, sharing: "important") { phone, laptop, id in
            harness.tick()
            try await phone.delete(id)
            harness.tick()
            try await laptop.save(id: id, title: "Shared", text: "important, and more")
            try await phone.sync()
            try await laptop.sync()
            try await phone.sync()
            for device in [phone, laptop] {
                #expect(try await device.note(id)?.isDeleted == false)
                #expect(try await device.note(id)?.text == "important, and more")
            }
        }
    }

    @Test("a note saved while a sync runs is not lost: it goes up with the next sync")
    func writeDuringSync() async throws {
        let harness = NotesHarness()
        // The push waits at the middleware until the test has saved again.
        let faults = FaultInjectingMiddleware(plan: .scripted([.reorder]), appliesTo: { $0.path.hasSuffix("/push") })
        let phone = harness.device("phone", harness.loopback().with(faults))
        let laptop = harness.device("laptop", harness.loopback())

        let id = try await phone.save(title: "Draft", text: "one")
        async let first = phone.sync()
        await faults.waitForHeldRequests()
        harness.tick()
        try await phone.save(id: id, title: "Draft", text: "one, two")
        faults.releaseHeldRequests()
        #expect(try await first.pushed == 1)

        // The edit made during the push is still waiting, based on what the server took.
        #expect(try await phone.sync() == .init(pushed: 1, pulled: 0, conflicts: 0))
        try await laptop.sync()
        #expect(try await laptop.note(id)?.text == "one, two")
    }

    @Test("a push whose answer is lost is sent again and applied once")
    func lostAnswer() async throws {
        let harness = NotesHarness()
        let faults = FaultInjectingMiddleware(
            plan: .scripted([.cutAfterProcessing]), appliesTo: { $0.path.hasSuffix("/push") })
        let phone = harness.device("phone", harness.loopback().with(faults))

        try await phone.save(title: "Once", text: "only once")
        #expect(try await phone.sync() == .init(pushed: 1, pulled: 0, conflicts: 0))
        #expect(faults.counts.cutAfterProcessing == 1)
        #expect(try await harness.serverStore.latestPosition(for: "ada") == ChangePosition(1))  // one write
        #expect(try await phone.sync() == .init(pushed: 0, pulled: 0, conflicts: 0))
    }
}
