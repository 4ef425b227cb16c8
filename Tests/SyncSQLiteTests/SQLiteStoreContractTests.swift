import Foundation
import SyncCore
import SyncSQLite
import SyncTesting
import Testing

/// Runs `check` on stores of `kind`: in memory, or database files in a
/// directory of their own, removed when the check ends.
private func verify(
    _ check: StoreContractSuite.Check, on kind: StoreKind, concurrentWriters: Int = 8, incrementsPerWriter: Int = 200
) async throws {
    switch kind {
    case .inMemory:
        let suite = StoreContractSuite(concurrentWriters: concurrentWriters, incrementsPerWriter: incrementsPerWriter) {
            try SQLiteStore.inMemory()
        }
        try await check.run(on: suite)
    case .file:
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let suite = StoreContractSuite(concurrentWriters: concurrentWriters, incrementsPerWriter: incrementsPerWriter) {
            try SQLiteStore(path: directory.file("contract-\(UUID().uuidString).sqlite"))
        }
        try await check.run(on: suite)
    }
}

@Suite("SQLiteStore keeps the store contract, in memory and on a file")
struct SQLiteStoreContractTests {
    @Test(arguments: StoreKind.allCases, StoreContractSuite.Check.allCases)
    func keepsTheContract(on kind: StoreKind, _ check: StoreContractSuite.Check) async throws {
        try await verify(check, on: kind)
    }
}
