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
}
