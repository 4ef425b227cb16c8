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
        let positions = try await transaction(for: account) { tx in
            try await tx.records(at: keys).values.map(\.position.rawValue).sorted()
        }
        guard positions.count == keys.count, let first = positions.first, let last = positions.last,
            last - first == UInt64(positions.count - 1), Set(positions).count == positions.count,
            last == latest.rawValue, first > 0
        else { return nil }
        return ChangePosition(first - 1)
    }
}
