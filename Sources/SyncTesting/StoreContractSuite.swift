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
/// // or each check in a test of its own:
/// @Test(arguments: StoreContractSuite.Check.allCases)
/// func keepsTheContract(_ check: StoreContractSuite.Check) async throws {
///     try await check.run(on: suite)
/// }
/// ```
///
/// The concurrency checks (``Check/isConcurrent``) run ``concurrentWriters``
/// writers that each make ``incrementsPerWriter`` read-modify-write
/// increments of one shared record. The defaults, 8 × 200, suit a store in
/// the process; where each transaction is a round trip to a database server,
/// 8 writers of a few hundred transactions in all (8 × 40) prove in seconds
/// that no update is lost. Raise the counts for a longer soak.
public struct StoreContractSuite: Sendable {
    /// Makes a fresh, empty store for one check.
    public typealias StoreFactory = @Sendable () async throws -> any SyncStore

    /// The factory each check asks for its store.
    public let makeStore: StoreFactory
    /// How many writers the concurrency checks run at once (at least 1).
    public let concurrentWriters: Int
    /// How many increments each writer of the concurrency checks makes (at least 1).
    public let incrementsPerWriter: Int

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

    /// Runs every check in ``Check/allCases``, one after another, each on a fresh store.
    /// - Throws: ``VerificationError`` from the first check that fails, or
    ///   what the store or the factory throws.
    public func runAll() async throws {
        for check in Check.allCases {
            try await check.run(on: self)
        }
    }
}
