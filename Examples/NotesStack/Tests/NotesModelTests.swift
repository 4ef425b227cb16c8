import Foundation
import NotesStack
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// The notes stack's typed API: a `SyncModel` of kind `note` whose properties beyond title and text travel
/// with the note, and survive an older app's save.
@Suite("notes: typed models through the server, in process and over HTTP")
struct NotesModelTests {
    struct TaggedNote: SyncModel, Hashable {
        static let modelName = "note"
        var id = UUID().uuidString
        var title: String
        var text: String
        var tags: [String] = []
    }

    /// An older app's note: title and text only.
    struct PlainNote: SyncModel {
        static let modelName = "note"
        var id: String
        var title: String
        var text: String
    }

    @Test("save, list, read, delete and observe; tags an older app does not know survive its save", arguments: TransportRoute.allCases)
    func typedRoundTrip(route: TransportRoute) async throws {
        let harness = NotesHarness()
        try await harness.withTransport(route) { transport in
            let phone = harness.device("phone", transport)
            let laptop = harness.device("laptop", transport)
            let shopping = TaggedNote(title: "Shopping", text: "milk", tags: ["home"])
            try await phone.save(shopping)
            var observed = phone.observe(TaggedNote.self).makeAsyncIterator()
            #expect(try await observed.next() == [shopping])
            try await phone.sync()
            try await laptop.sync()
            #expect(try await laptop.model(TaggedNote.self, id: shopping.id) == shopping)

            var plain = try #require(try await laptop.model(PlainNote.self, id: shopping.id))
            plain.text = "milk, eggs"
            try await laptop.save(plain)
            try await laptop.save(id: shopping.id, title: "Shopping list", text: "milk, eggs")  // the dictionary-free API keeps them too
            try await laptop.sync()
            try await phone.sync()
            let changed = try #require(try await phone.model(TaggedNote.self, id: shopping.id))
            #expect(changed.title == "Shopping list" && changed.text == "milk, eggs" && changed.tags == ["home"])
            #expect(try await observed.next() == [changed])
            #expect(phone.syncStatus.current.activity == .upToDate)

            try await phone.delete(TaggedNote.self, id: shopping.id)
            try await phone.sync()
            try await laptop.sync()
            #expect(try await laptop.all(TaggedNote.self).isEmpty)
        }
    }
}
