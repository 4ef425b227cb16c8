extension SyncStore {
    /// The change position right before the records at `keys`, when they hold the account's newest
    /// positions one after another, the last of them `latest`; `nil` otherwise (something else was
    /// written among or after them, or a key was not written).
    ///
    /// A server answers a device's upload with it, so that the device, when its pull position is that
    /// position, moves it to `latest` past its own writes instead of reading them back on its next pull
    /// (appSync's `servercounter_before`, Aquasync's `ustBefore`).
    ///
    /// - Parameters:
    ///   - keys: The records the upload wrote.
    ///   - latest: The account's latest position, read after the upload committed.
    ///   - account: The account.
    /// - Throws: ``StoreError``.
    public func position(
        before keys: [RecordKey], upTo latest: ChangePosition, for account: AccountID
    ) async throws -> ChangePosition? {
        guard !keys.isEmpty else { return latest }
        // The keys hold positions latest - n + 1 … latest exactly when the n changes after latest - n are
        // theirs: one read of those changes, with no transaction, answers it.
        let count = UInt64(keys.count)
        guard latest.rawValue >= count, Set(keys).count == keys.count else { return nil }
        let before = ChangePosition(latest.rawValue - count)
        let newest = try await changes(for: account, after: before, in: nil, limit: keys.count).records
        guard newest.count == keys.count, newest.allSatisfy({ $0.position.rawValue <= latest.rawValue }),
            Set(newest.map(\.record.key)) == Set(keys)
        else { return nil }
        return before
    }

    /// Where an upload's records sit in the account's change sequence, for the upload's answer: the
    /// position right before them and the last of them, when they are the newest changes one after
    /// another; `nil` otherwise.
    ///
    /// With the commit's positions (``transactionWithPositions(for:_:)``) nothing is read: the records
    /// took those positions when the commit wrote exactly as many records as `keys` names. A store that
    /// cannot tell its positions is asked for its latest position and ``position(before:upTo:for:)``.
    /// - Parameters:
    ///   - keys: The records the upload's transaction wrote; it wrote no record outside them.
    ///   - positions: The positions the transaction's commit handed out, if the store told them.
    ///   - account: The account.
    /// - Throws: ``StoreError``.
    public func uploadPositions(
        of keys: [RecordKey], committed positions: CommittedPositions?, for account: AccountID
    ) async throws -> CommittedPositions? {
        guard let positions else {
            let latest = try await latestPosition(for: account)
            return try await position(before: keys, upTo: latest, for: account).map { CommittedPositions(before: $0, latest: latest) }
        }
        guard positions.recordWrites == UInt64(keys.count), Set(keys).count == keys.count else { return nil }
        return positions
    }
}
