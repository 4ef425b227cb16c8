import NotesStack
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
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

            // Both edit the groceries before they sync again: the laptop pulls the phone's edit while
            // its own is pending, and its policy (NotesMergePolicy) merges them; the merge goes up.
            harness.tick()
            try await phone.save(id: groceries, title: "Groceries", text: "milk, eggs")
            harness.tick()
            try await laptop.save(id: groceries, title: "Shopping", text: "milk, bread")
            #expect(try await phone.sync().conflicts == 0)
            let merged = try await laptop.sync()
            #expect(merged.conflicts == 1 && merged.pushed == 1 && merged.openConflicts == 0)
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
            #expect(try await phone.pendingKeys().isEmpty)
            #expect(try await laptop.pendingKeys().isEmpty)
        }
    }

    @Test("edits made offline survive a failed sync and a restart, and go up with the next sync", arguments: TransportRoute.allCases)
    func offlineEditsGoUp(route: TransportRoute) async throws {
        let harness = NotesHarness()
        try await harness.withTransport(route) { transport in
            let phoneStore = MemoryStore()
            let phone = harness.device("phone", transport, store: phoneStore)
            let laptop = harness.device("laptop", transport)
            let shared = try await phone.save(title: "Shared", text: "first")
            let doomed = try await phone.save(title: "Doomed", text: "soon gone")
            try await phone.sync()

            // Offline: every attempt of the sync's first request is dropped.
            let offline = FaultInjectingMiddleware(plan: .scripted([.drop, .drop, .drop]))
            let offlinePhone = harness.device("phone", transport.with(offline), store: phoneStore)
            harness.tick()
            try await offlinePhone.save(id: shared, title: "Shared", text: "first, then more")
            let new = try await offlinePhone.save(title: "New", text: "written on a train")
            try await offlinePhone.delete(doomed)
            let error = await #expect(throws: (any Error).self) { try await offlinePhone.sync() }
            #expect(SyncFailureClass(of: try #require(error)) == .retryLater)
            #expect(offline.counts.dropped == 3)
            #expect(Set(try await offlinePhone.pendingKeys().map(\.id.rawValue)) == [shared, new, doomed])

            // The app restarts: a new client on the same store finds the changes in the journal, and
            // sends them two at a time.
            let restarted = harness.device("phone", transport, store: phoneStore, pushSize: 2)
            #expect(try await restarted.notes().map(\.title).sorted() == ["New", "Shared"])
            #expect(try await restarted.sync() == .init(pushed: 3, pulled: 0, conflicts: 0))
            #expect(try await restarted.pendingKeys().isEmpty)

            try await laptop.sync()
            #expect(try await laptop.note(shared)?.text == "first, then more")
            #expect(try await laptop.note(new)?.text == "written on a train")
            #expect(try await laptop.note(doomed)?.isDeleted == true)
            #expect(try await laptop.notes() == restarted.notes())
        }
    }

    @Test("with .serverWins on the device, it takes the server's note and sends nothing more", arguments: TransportRoute.allCases)
    func clientPolicyDecides(route: TransportRoute) async throws {
        let harness = NotesHarness()
        try await harness.withTwoDevices(route, sharing: "first draft", laptopPolicy: .serverWins) { phone, laptop, id in
            harness.tick()
            try await phone.save(id: id, title: "Shared", text: "phone's draft")
            try await laptop.save(id: id, title: "Shared", text: "laptop's draft")
            try await phone.sync()
            #expect(try await laptop.sync() == .init(pushed: 0, pulled: 1, conflicts: 1))
            #expect(try await laptop.note(id)?.text == "phone's draft")
            #expect(try await laptop.pendingKeys().isEmpty)
            #expect(try await laptop.sync() == .init(pushed: 0, pulled: 0, conflicts: 0))
        }
    }

    @Test("ask the user: the conflict waits with base, mine and theirs; the next sync carries the answer out",
          arguments: TransportRoute.allCases)
    func askTheUser(route: TransportRoute) async throws {
        let harness = NotesHarness()
        try await harness.withTwoDevices(route, sharing: "first draft", laptopPolicy: .askUser) { phone, laptop, id in
            harness.tick()
            try await phone.save(id: id, title: "Shared", text: "phone's draft")
            harness.tick()
            try await laptop.save(id: id, title: "Shared", text: "laptop's draft")
            try await phone.sync()

            #expect(try await laptop.sync() == .init(pushed: 0, pulled: 0, conflicts: 1, openConflicts: 1))
            let conflict = try #require(try await laptop.openConflicts().first)
            #expect(conflict.base?.fields["text"] == "first draft")
            #expect(conflict.local.fields["text"] == "laptop's draft")
            #expect(conflict.remote.fields["text"] == "phone's draft")
            #expect(conflict.localAction == .modify && conflict.awaitsAnswer)
            #expect(try await laptop.note(id)?.text == "laptop's draft")  // the device keeps its version meanwhile

            // Unanswered, it stays open and its change is not sent.
            #expect(try await laptop.sync() == .init(pushed: 0, pulled: 0, conflicts: 0, openConflicts: 1))

            try await laptop.store.answerConflict(conflict.id, with: .keepMine, for: laptop.account)
            #expect(try await laptop.sync() == .init(pushed: 1, pulled: 0, conflicts: 0, openConflicts: 0))
            #expect(try await phone.sync().pulled == 1)
            for device in [phone, laptop] { #expect(try await device.note(id)?.text == "laptop's draft") }
            #expect(try await laptop.pendingKeys().isEmpty)
        }
    }

    @Test("ask the user, answered theirs or both", arguments: [ConflictAnswer.takeTheirs, .keepBoth])
    func otherAnswers(answer: ConflictAnswer) async throws {
        let harness = NotesHarness()
        try await harness.withTwoDevices(.loopback, sharing: "first draft", laptopPolicy: .askUser) { phone, laptop, id in
            harness.tick()
            try await phone.save(id: id, title: "Shared", text: "phone's draft")
            harness.tick()
            try await laptop.save(id: id, title: "Shared", text: "laptop's draft")
            try await phone.sync()
            try await laptop.sync()
            try await laptop.store.answerConflict("notes/\(id)", with: answer, for: laptop.account)

            let report = try await laptop.sync()
            #expect(report.pulled == 1 && report.openConflicts == 0)
            #expect(try await laptop.note(id)?.text == "phone's draft")
            if answer == .keepBoth {
                #expect(report.pushed == 1)  // the laptop's version, as a new note
                try await phone.sync()
                #expect(try await phone.notes().map(\.text).sorted() == ["laptop's draft", "phone's draft"])
            } else {
                #expect(report.pushed == 0)
                try await phone.sync()
                #expect(try await phone.notes().map(\.text) == ["phone's draft"])
            }
            #expect(try await phone.notes() == laptop.notes())
        }
    }

    @Test("an edit made after the answer withdraws it: the user is asked again")
    func editAfterAnswer() async throws {
        let harness = NotesHarness()
        try await harness.withTwoDevices(.loopback, sharing: "first draft", laptopPolicy: .askUser) { phone, laptop, id in
            harness.tick()
            try await phone.save(id: id, title: "Shared", text: "phone's draft")
            try await laptop.save(id: id, title: "Shared", text: "laptop's draft")
            try await phone.sync()
            try await laptop.sync()
            try await laptop.store.answerConflict("notes/\(id)", with: .takeTheirs, for: laptop.account)
            try await laptop.save(id: id, title: "Shared", text: "laptop's second draft")
            #expect(try await laptop.sync() == .init(pushed: 0, pulled: 0, conflicts: 0, openConflicts: 1))
            #expect(try await laptop.openConflicts().first?.local.fields["text"] == "laptop's second draft")
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

    @Test("a change pushed by another device between pull and push: the server's policy decides the race")
    func raceDecidedByServer() async throws {
        let harness = NotesHarness()
        // The laptop's first push waits at the middleware, after its pull, until the phone has pushed.
        let faults = FaultInjectingMiddleware(plan: .scripted([.reorder]), appliesTo: { $0.path.hasSuffix("/push") })
        let phone = harness.device("phone", harness.loopback())
        let laptop = harness.device("laptop", harness.loopback().with(faults))
        let id = try await phone.save(title: "List", text: "milk")
        try await phone.sync()
        try await laptop.sync()  // nothing to push yet

        harness.tick()
        try await laptop.save(id: id, title: "List", text: "milk, bread")
        async let laptopSync = laptop.sync()  // its pull goes through, its push is held
        await faults.waitForHeldRequests()
        harness.tick()
        try await phone.save(id: id, title: "List", text: "milk, eggs")
        try await phone.sync()
        faults.releaseHeldRequests()
        // The server merged (NotesMergePolicy), and the laptop takes the merge.
        #expect(try await laptopSync.conflicts == 1)
        try await phone.sync()
        for device in [phone, laptop] {
            #expect(try await device.note(id)?.text == "milk, bread\n\nmilk, eggs")
            #expect(try await device.pendingKeys().isEmpty)
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
