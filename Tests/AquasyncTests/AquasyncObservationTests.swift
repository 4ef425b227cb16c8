import Aquasync
import Foundation
import SyncCore
import SyncSQLite
import SyncTesting
import TestSupport
import Testing

/// Observing a device's records: `observe(Model.self)` on SQLite and memory stores, through local saves
/// and syncs.
@Suite("Aquasync: observing typed records")
struct AquasyncObservationTests {
    struct Contact: SyncModel, Hashable {
        static let modelName = "Contact"
        var id = TimeOrderedUUID.makeID()
        var name: String
    }

    enum DeviceStore: String, CaseIterable { case memory, sqlite }

    static func store(_ kind: DeviceStore, in folder: TemporaryFolder) throws -> any SyncStore {
        switch kind {
        case .memory: MemoryStore()
        case .sqlite: try SQLiteStore(path: folder.path("device.sqlite"))
        }
    }

    @Test("the records at once, after a local save, and a pull of 300 records as one value", arguments: DeviceStore.allCases)
    func valuesFollowChanges(kind: DeviceStore) async throws {
        let folder = try TemporaryFolder("aquasync-observe")
        let harness = AquasyncHarness()
        let writer = harness.client(.json)
        let device = harness.client(.json, store: try Self.store(kind, in: folder))
        try await device.save(Contact(name: "Ada"))

        var values = device.observe(Contact.self).makeAsyncIterator()
        #expect(try await values.next()?.map(\.name) == ["Ada"])

        try await device.save(Contact(name: "Grace"))
        #expect(try await values.next()?.map(\.name).sorted() == ["Ada", "Grace"])

        // Another device writes 300 contacts; this one pulls them in pages (six commits) while nobody reads.
        let people: [(gid: String?, fields: [String: SyncValue])] = (0..<300).map { (nil, ["name": .string("person \($0)")]) }
        _ = try await writer.records.save("Contact", people)
        try await writer.sync()
        try await device.sync()
        #expect(try await values.next()?.count == 302)
        // Nothing is left over from the pull's commits: the next value is the next change's.
        try await device.save(Contact(name: "Hedy"))
        #expect(try await values.next()?.count == 303)
    }

    @Test("a filter, and a model with a field it cannot read is an error from the sequence")
    func filterAndErrors() async throws {
        let harness = AquasyncHarness()
        let device = harness.client(.json)
        try await device.save(Contact(name: "Ada"))
        try await device.save(Contact(name: "Grace"))
        var graces = device.observe(Contact.self, where: { $0.name.hasPrefix("G") }).makeAsyncIterator()
        #expect(try await graces.next()?.map(\.name) == ["Grace"])

        _ = try await device.save("Contact", fields: ["name": 42])
        await #expect(throws: ModelDecodingError.self) { _ = try await graces.next() }
    }

    @Test("cancelling the consuming task ends the sequence")
    func cancellationEnds() async throws {
        let harness = AquasyncHarness()
        let device = harness.client(.json)
        let (firstValue, seen) = AsyncStream<Void>.makeStream()
        let consumer = Task {
            var values = 0
            for try await _ in device.observe(Contact.self) {
                values += 1
                seen.yield()
            }
            return values
        }
        var waiting = firstValue.makeAsyncIterator()
        _ = await waiting.next()
        consumer.cancel()
        #expect(try await consumer.value == 1)
    }
}
