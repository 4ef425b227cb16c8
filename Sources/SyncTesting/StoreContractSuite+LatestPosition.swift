import SyncCore

/// The check of the latest position a transaction reads.
extension StoreContractSuite {
    /// Checks ``SyncCore/StoreTransaction/latestPosition()``: a store whose transactions tell it (not
    /// `nil`) answers the position ``SyncCore/SyncStore/latestPosition(for:)`` answers for the account —
    /// on a new account, after a commit, alone and after a batched read of records and metadata — and a
    /// transaction's own writes, not committed yet, do not move it. A store that answers `nil` passes.
    /// - Throws: ``VerificationError`` naming the rule "latest position in a transaction".
    public func verifyLatestPositionInTransaction() async throws {
        try await checking(.latestPositionInTransaction) { store, check in
            let account: AccountID = "contract-latest-position"
            let keys = (0..<3).map { RecordKey(collection: "notes", id: RecordID("n\($0)")) }
            guard let empty = try await store.transaction(for: account, { tx in try await tx.latestPosition() }) else { return }
            try require(empty == .start, check, "a transaction on a new account read latest position \(empty), not the start")

            let ownWrite = try await store.transaction(for: account) { tx in
                for key in keys { try await tx.put(Self.record(key.collection, key.id, ["text": "written"])) }
                return try await tx.latestPosition()
            }
            try require(
                ownWrite == .start, check,
                "a transaction's own writes, not committed yet, moved the latest position it read to \(String(describing: ownWrite))")
            let latest = try await store.latestPosition(for: account)
            try require(latest > .start, check, "the store's latest position did not move after a commit of 3 records")

            let alone = try await store.transaction(for: account) { tx in try await tx.latestPosition() }
            try require(alone == latest, check, "a transaction read latest position \(String(describing: alone)); the store says \(latest)")
            let afterBatch = try await store.transaction(for: account) { tx in
                _ = try await tx.records(at: keys + [RecordKey(collection: "notes", id: "never")], withMetadata: "ledger", for: "server")
                return try await tx.latestPosition()
            }
            try require(
                afterBatch == latest, check,
                "after a batched read of records and metadata, a transaction read latest position \(String(describing: afterBatch)); the store says \(latest)"
            )
        }
    }
}
