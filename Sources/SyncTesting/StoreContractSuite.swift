public import SyncCore

/// Checks that a ``SyncStore`` keeps every rule of the protocol: run it in the
/// tests of any store implementation.
///
/// Each check asks the factory for a fresh, empty store and throws a
/// ``VerificationError`` naming the rule it found broken.
///
/// ```swift
/// let suite = StoreContractSuite(makeStore: { MemoryStore() })
/// try await suite.runAll()
/// // or one rule at a time, each in its own test:
/// try await suite.verifyRollbackOnThrow()
/// ```
///
/// The concurrency checks run ``concurrentWriters`` writers that each make
/// ``incrementsPerWriter`` read-modify-write increments of one shared record;
/// raise the count for durable stores (8 × 1,000 is a good soak).
public struct StoreContractSuite: Sendable {
    /// Makes a fresh, empty store for one check.
    public typealias StoreFactory = @Sendable () async throws -> any SyncStore

    /// The factory each check asks for its store.
    public let makeStore: StoreFactory
    /// How many writers the concurrency checks run at once.
    public var concurrentWriters: Int
    /// How many increments each writer of the concurrency checks makes.
    public var incrementsPerWriter: Int

    /// Makes a suite.
    /// - Parameters:
    ///   - concurrentWriters: writers running at once in the concurrency checks (at least 1).
    ///   - incrementsPerWriter: transactions each writer commits (at least 1).
    ///   - makeStore: makes a fresh, empty store; called once per check.
    public init(concurrentWriters: Int = 8, incrementsPerWriter: Int = 200, makeStore: @escaping StoreFactory) {
        self.concurrentWriters = max(1, concurrentWriters)
        self.incrementsPerWriter = max(1, incrementsPerWriter)
        self.makeStore = makeStore
    }

    /// Runs every check, one after another, each on a fresh store.
    /// - Throws: ``VerificationError`` from the first check that fails, or
    ///   what the store or the factory throws.
    public func runAll() async throws {
        try await verifyRoundTrip()
        try await verifyReadYourWrites()
        try await verifyRollbackOnThrow()
        try await verifyChangeSequence()
        try await verifyPaging()
        try await verifyCollectionFilter()
        try await verifyRewriteAppearsOnce()
        try await verifyAccountIsolation()
        try await verifyMetadata()
        try await verifyPurge()
        try await verifyInvalidLimitsRejected()
        try await verifyConcurrentIncrements()
        try await verifyConcurrentReaderSeesEveryChangeOnce()
    }
}
