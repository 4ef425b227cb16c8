import FoundationEssentials
import SyncCore
import SyncTesting
import Testing

@Suite("QuotaStore keeps the store contract and counts exactly")
struct QuotaStoreTests {
    /// Limits high enough that the contract's own writes fit.
    let suite = StoreContractSuite { QuotaStore(base: MemoryStore(), limits: .init(records: 1_000_000, bytes: 1 << 30)) }

    @Test(arguments: StoreContractSuite.Check.allCases)
    func keepsTheContract(_ check: StoreContractSuite.Check) async throws { try await check.run(on: suite) }

    static func record(_ id: String, _ text: String, deleted: Bool = false) -> SyncRecord {
        SyncRecord(collection: "notes", id: RecordID(id), fields: ["text": .string(text)], isDeleted: deleted,
            version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000), node: "tests"))
    }

    @Test("usage follows puts, replacements, deletes and purges; a refused transaction leaves records and usage as they were")
    func counting() async throws {
        let base = MemoryStore()
        let store = QuotaStore(base: base, limits: .init(records: 2))
        let one = try QuotaStore.size(of: Self.record("a", "x"))
        try await store.transaction(for: "ada") { tx in
            try await tx.put(Self.record("a", "x"))
            try await tx.put(Self.record("b", "x"))
        }
        #expect(try await store.usage(of: "ada") == .init(records: 2, bytes: 2 * one))

        await #expect(throws: StoreError.self) {
            try await store.transaction(for: "ada") { tx in try await tx.put(Self.record("c", "x")) }
        }
        #expect(try await base.transaction(for: "ada") { tx in try await tx.record(RecordKey(collection: "notes", id: "c")) } == nil)
        #expect(try await store.usage(of: "ada") == .init(records: 2, bytes: 2 * one))
        #expect(try await store.usage(of: "bob") == .init(), "another account holds nothing")

        try await store.transaction(for: "ada") { tx in
            try await tx.put(Self.record("a", "x", deleted: true))
            try await tx.put(Self.record("b", "xyz"))
            try await tx.put(Self.record("c", "x"))
        }
        #expect(try await store.usage(of: "ada") == .init(records: 2, bytes: 2 * one + 2))
        try await store.transaction(for: "ada") { tx in try await tx.purge(RecordKey(collection: "notes", id: "c")) }
        #expect(try await store.usage(of: "ada") == .init(records: 1, bytes: one + 2))
    }

    @Test("records written before the quota are counted once, from the change sequence")
    func countsExistingRecords() async throws {
        let base = MemoryStore()
        try await base.transaction(for: "ada") { tx in
            try await tx.put(Self.record("a", "x"))
            try await tx.put(Self.record("b", "x"))
        }
        let store = QuotaStore(base: base, limits: .init(records: 2))
        let error = await #expect(throws: StoreError.self) {
            try await store.transaction(for: "ada") { tx in try await tx.put(Self.record("c", "x")) }
        }
        #expect(error?.code == .quotaExceeded)
        try await store.transaction(for: "ada") { tx in try await tx.put(Self.record("a", "x", deleted: true)) }
        #expect(try await store.usage(of: "ada").records == 1)
    }
}
