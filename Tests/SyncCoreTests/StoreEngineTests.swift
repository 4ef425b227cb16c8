import FoundationEssentials
import SyncCore
import Testing

@Suite("Typed metadata keys and paging sequences")
struct StoreEngineTests {
    static let peer: PeerID = "tests.client"
    static let cursor = MetadataKey<ChangePosition>("cursor", peer: peer)
    static let name = MetadataKey<String>("name", peer: peer)
    static let counter = MetadataKey<Int64>("counter", peer: peer)

    static func record(_ collection: CollectionID, _ id: RecordID, deleted: Bool = false) -> SyncRecord {
        SyncRecord(
            collection: collection, id: id, isDeleted: deleted,
            version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000), node: "tests"))
    }

    @Test("a typed key stores its value as the bare value and reads it back; nil removes it")
    func typedMetadata() async throws {
        let store = MemoryStore().scoped(to: "ada")
        #expect(try await store.metadata(Self.cursor) == nil)
        try await store.setMetadata(ChangePosition(42), Self.cursor)
        try await store.setMetadata("tablet", Self.name)
        #expect(try await store.metadata(Self.cursor) == ChangePosition(42))
        #expect(try await store.metadata(Self.name) == "tablet")
        let raw = try await store.transaction { tx in
            (try await tx.metadata("cursor", for: Self.peer), try await tx.metadata("name", for: Self.peer))
        }
        #expect(raw.0 == .integer(42))
        #expect(raw.1 == .string("tablet"))
        try await store.setMetadata(nil, Self.cursor)
        #expect(try await store.metadata(Self.cursor) == nil)
    }

    @Test("a stored value of another type is a corrupt-store error")
    func typedMetadataMismatch() async throws {
        let store = MemoryStore().scoped(to: "ada")
        try await store.transaction { tx in try await tx.setMetadata("not a number", "counter", for: Self.peer) }
        let error = await #expect(throws: StoreError.self) { try await store.metadata(Self.counter) }
        #expect(error?.code == .corrupt)
    }

    @Test("change pages cover the change sequence after a position, in order, and end after the last")
    func changePages() async throws {
        let store = MemoryStore().scoped(to: "ada")
        for index in 0..<7 {
            try await store.transaction { tx in
                try await tx.put(Self.record("notes", RecordID("n\(index)")))
            }
        }
        var pages: [[RecordID]] = []
        var reached = ChangePosition.start
        for try await page in store.changePages(after: ChangePosition(1), pageSize: 2) {
            pages.append(page.records.map(\.record.id))
            reached = page.lastPosition
        }
        #expect(pages == [["n1", "n2"], ["n3", "n4"], ["n5", "n6"]])
        #expect(reached == ChangePosition(7))

        var empty: [ChangeBatch] = []
        for try await page in store.changePages(after: ChangePosition(7)) { empty.append(page) }
        #expect(empty.map(\.records.count) == [0])
        #expect(empty.first?.lastPosition == ChangePosition(7))
    }

    @Test("all records of a collection come in id order across pages, tombstones included, other collections not")
    func collectionRecords() async throws {
        let store = MemoryStore().scoped(to: "ada")
        let ids = (0..<5).map { RecordID("r\($0)") }
        try await store.transaction { tx in
            for id in ids.reversed() { try await tx.put(Self.record("notes", id)) }
            try await tx.put(Self.record("notes", "r5", deleted: true))
            try await tx.put(Self.record("other", "x"))
        }
        for pageSize in [1, 2, 3, 6, 100] {
            let read = try await store.transaction { tx in
                var read: [RecordID] = []
                for try await stored in tx.allRecords(in: "notes", pageSize: pageSize) { read.append(stored.record.id) }
                return read
            }
            #expect(read == ids + ["r5"], "page size \(pageSize)")
        }
    }

    @Test("the position before an upload's records, only when they are the account's newest changes one after another")
    func positionBeforeAnUpload() async throws {
        let store = MemoryStore()
        let (a, b, c) = (Self.record("notes", "a"), Self.record("notes", "b"), Self.record("notes", "c"))
        func write(_ records: SyncRecord...) async throws -> ChangePosition {
            try await store.transaction(for: "ada") { tx in for record in records { try await tx.put(record) } }
            return try await store.latestPosition(for: "ada")
        }
        _ = try await write(c)  // position 1: someone else's
        var latest = try await write(a, b)  // 2 and 3
        #expect(try await store.position(before: [b.key, a.key], upTo: latest, for: "ada") == ChangePosition(1))
        #expect(try await store.position(before: [a.key], upTo: latest, for: "ada") == nil, "b came after a")
        #expect(try await store.position(before: [a.key, a.key], upTo: latest, for: "ada") == nil, "a key twice")
        #expect(try await store.position(before: [], upTo: latest, for: "ada") == latest)
        #expect(try await store.position(before: [a.key, b.key, c.key, a.key], upTo: latest, for: "ada") == nil)

        latest = try await write(a)  // a moves to 4; 2 is now a gap, before b
        #expect(try await store.position(before: [a.key, b.key], upTo: latest, for: "ada") == ChangePosition(2))
        #expect(try await store.position(before: [a.key], upTo: latest, for: "ada") == ChangePosition(3))
        #expect(try await store.position(before: [a.key], upTo: ChangePosition(3), for: "ada") == nil, "a is past the latest given")
        latest = try await write(c)  // c moves to 5: b at 3, a at 4, c at 5
        #expect(try await store.position(before: [b.key, c.key], upTo: latest, for: "ada") == nil, "a came between b and c")
        #expect(try await store.position(before: [c.key, b.key, a.key], upTo: latest, for: "ada") == ChangePosition(2))
    }
}

