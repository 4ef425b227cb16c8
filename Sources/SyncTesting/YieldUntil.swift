/// Yields the current task until `condition` holds, at most `maxYields`
/// times: for a state another task reaches with no clock involved, such as a
/// second sync waiting at a `SyncGate`.
///
/// ```swift
/// let second = Task { try await client.sync() }
/// #expect(await yieldUntil { client.syncGate.waitingCount == 1 })
/// ```
/// - Returns: Whether `condition` held before the yields ran out.
public func yieldUntil(maxYields: Int = 100_000, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<maxYields {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
