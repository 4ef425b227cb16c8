import Foundation
import SyncCore
import SyncSQLite
import SyncTesting
import Testing

/// A store contract suite whose stores are database files in a directory of
/// its own, removed when the test ends.
final class FileStoreSuite: Sendable {
    let directory: TemporaryDirectory
    let suite: StoreContractSuite

    init(concurrentWriters: Int = 8, incrementsPerWriter: Int = 200) throws {
        let directory = try TemporaryDirectory()
        self.directory = directory
        suite = StoreContractSuite(concurrentWriters: concurrentWriters, incrementsPerWriter: incrementsPerWriter) {
            try SQLiteStore(path: directory.file("contract-\(UUID().uuidString).sqlite"))
        }
    }

    deinit { directory.remove() }
}

@Suite("SQLiteStore keeps the store contract (in memory)")
struct SQLiteStoreInMemoryContractTests {
    let suite = StoreContractSuite { try SQLiteStore.inMemory() }

    @Test func runAllPasses() async throws { try await suite.runAll() }
}

@Suite("SQLiteStore keeps the store contract (file)")
struct SQLiteStoreFileContractTests {
    let files: FileStoreSuite
    var suite: StoreContractSuite { files.suite }

    init() throws { files = try FileStoreSuite() }

    @Test func roundTrip() async throws { try await suite.verifyRoundTrip() }

    @Test func readYourWrites() async throws { try await suite.verifyReadYourWrites() }

    @Test func rollbackOnThrow() async throws { try await suite.verifyRollbackOnThrow() }

    @Test func changeSequence() async throws { try await suite.verifyChangeSequence() }

    @Test func paging() async throws { try await suite.verifyPaging() }

    @Test func collectionFilter() async throws { try await suite.verifyCollectionFilter() }

    @Test func rewriteAppearsOnce() async throws { try await suite.verifyRewriteAppearsOnce() }

    @Test func accountIsolation() async throws { try await suite.verifyAccountIsolation() }

    @Test func metadata() async throws { try await suite.verifyMetadata() }

    @Test func purge() async throws { try await suite.verifyPurge() }

    @Test func invalidLimitsRejected() async throws { try await suite.verifyInvalidLimitsRejected() }

    @Test func concurrentIncrements() async throws { try await suite.verifyConcurrentIncrements() }

    @Test func concurrentReaderSeesEveryChangeOnce() async throws {
        try await suite.verifyConcurrentReaderSeesEveryChangeOnce()
    }
}

@Suite("SQLiteStore soak on a file: 8 writers × 1,000 transactions")
struct SQLiteStoreSoakContractTests {
    let files: FileStoreSuite

    init() throws { files = try FileStoreSuite(concurrentWriters: 8, incrementsPerWriter: 1_000) }

    @Test func concurrentIncrementsLoseNoUpdate() async throws { try await files.suite.verifyConcurrentIncrements() }

    @Test func concurrentReaderSeesEveryChangeOnce() async throws {
        try await files.suite.verifyConcurrentReaderSeesEveryChangeOnce()
    }
}
