extension StoreContractSuite {
    /// One check of the store contract: the list every store's tests run.
    ///
    /// Run each check as a test of its own with a parameterized test, so a
    /// check added to the suite runs against your store without a change to
    /// your tests:
    /// ```swift
    /// @Test(arguments: StoreContractSuite.Check.allCases)
    /// func keepsTheContract(_ check: StoreContractSuite.Check) async throws {
    ///     try await check.run(on: suite)
    /// }
    /// ```
    /// Cases are in the order ``StoreContractSuite/runAll()`` runs them; the
    /// ``isConcurrent`` ones are the slow ones.
    public enum Check: String, CaseIterable, Sendable, CustomStringConvertible {
        /// ``StoreContractSuite/verifyRoundTrip()``.
        case roundTrip
        /// ``StoreContractSuite/verifyReadYourWrites()``.
        case readYourWrites
        /// ``StoreContractSuite/verifyRollbackOnThrow()``.
        case rollbackOnThrow
        /// ``StoreContractSuite/verifyChangeSequence()``.
        case changeSequence
        /// ``StoreContractSuite/verifyPaging()``.
        case paging
        /// ``StoreContractSuite/verifyCollectionFilter()``.
        case collectionFilter
        /// ``StoreContractSuite/verifyRewriteAppearsOnce()``.
        case rewriteAppearsOnce
        /// ``StoreContractSuite/verifyAccountIsolation()``.
        case accountIsolation
        /// ``StoreContractSuite/verifyMetadata()``.
        case metadata
        /// ``StoreContractSuite/verifyMetadataBatches()``.
        case metadataBatches
        /// ``StoreContractSuite/verifyPurge()``.
        case purge
        /// ``StoreContractSuite/verifyReadCommitted()``.
        case readCommitted
        /// ``StoreContractSuite/verifyInvalidLimitsRejected()``.
        case invalidLimitsRejected
        /// ``StoreContractSuite/verifyLatestPositionInTransaction()``.
        case latestPositionInTransaction
        /// ``StoreContractSuite/verifyConcurrentIncrements()``.
        case concurrentIncrements
        /// ``StoreContractSuite/verifyConcurrentReaderSeesEveryChangeOnce()``.
        case concurrentReaderSeesEveryChangeOnce

        /// The rule the check names in its ``VerificationError``, such as
        /// `round trip`: its message starts with `store contract, <rule>:`.
        public var rule: String {
            switch self {
            case .roundTrip: "round trip"
            case .readYourWrites: "read your writes"
            case .rollbackOnThrow: "rollback on throw"
            case .changeSequence: "change sequence"
            case .paging: "paging"
            case .collectionFilter: "collection filter"
            case .rewriteAppearsOnce: "rewrite appears once"
            case .accountIsolation: "account isolation"
            case .metadata: "metadata"
            case .metadataBatches: "metadata batches"
            case .purge: "purge"
            case .readCommitted: "read committed"
            case .invalidLimitsRejected: "invalid limits rejected"
            case .latestPositionInTransaction: "latest position in a transaction"
            case .concurrentIncrements: "concurrent increments"
            case .concurrentReaderSeesEveryChangeOnce: "concurrent reader sees every change once"
            }
        }

        /// The rule, as test output shows the check.
        public var description: String { rule }

        /// Whether the check runs ``StoreContractSuite/concurrentWriters``
        /// writers of ``StoreContractSuite/incrementsPerWriter`` transactions
        /// each: the checks a soak runs with larger counts.
        public var isConcurrent: Bool {
            switch self {
            case .concurrentIncrements, .concurrentReaderSeesEveryChangeOnce: true
            default: false
            }
        }

        /// The checks that run concurrent writers (``isConcurrent``), for a soak.
        public static var concurrent: [Check] { allCases.filter(\.isConcurrent) }

        /// Runs the check on a fresh store of `suite`.
        /// - Throws: ``VerificationError`` naming ``rule`` when the store breaks
        ///   it, or when the factory fails.
        public func run(on suite: StoreContractSuite) async throws {
            switch self {
            case .roundTrip: try await suite.verifyRoundTrip()
            case .readYourWrites: try await suite.verifyReadYourWrites()
            case .rollbackOnThrow: try await suite.verifyRollbackOnThrow()
            case .changeSequence: try await suite.verifyChangeSequence()
            case .paging: try await suite.verifyPaging()
            case .collectionFilter: try await suite.verifyCollectionFilter()
            case .rewriteAppearsOnce: try await suite.verifyRewriteAppearsOnce()
            case .accountIsolation: try await suite.verifyAccountIsolation()
            case .metadata: try await suite.verifyMetadata()
            case .metadataBatches: try await suite.verifyMetadataBatches()
            case .purge: try await suite.verifyPurge()
            case .readCommitted: try await suite.verifyReadCommitted()
            case .invalidLimitsRejected: try await suite.verifyInvalidLimitsRejected()
            case .latestPositionInTransaction: try await suite.verifyLatestPositionInTransaction()
            case .concurrentIncrements: try await suite.verifyConcurrentIncrements()
            case .concurrentReaderSeesEveryChangeOnce: try await suite.verifyConcurrentReaderSeesEveryChangeOnce()
            }
        }
    }
}
