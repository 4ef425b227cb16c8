/// Lets one test that fills a store with a large data set (the row-count tests' 100,000 records) run at a
/// time, whichever test target it is in.
///
/// Each such test keeps a core busy for a minute or more in a debug build; three at once, beside the rest
/// of the suite, left too little of a two-core machine for the tests that wait on a server within a
/// deadline. Waiting for the turn suspends the task; it blocks no thread.
///
/// ```swift
/// try await LargeDataTurn.shared.take { try await fillAndSync() }
/// ```
public actor LargeDataTurn {
    /// The one turn every test takes.
    public static let shared = LargeDataTurn()

    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once no other test holds the turn, and hands the turn on when it ends.
    /// - Throws: What `body` throws.
    public nonisolated func take<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        await acquire()
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async {
        guard taken else {
            taken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { taken = false } else { waiting.removeFirst().resume() }
    }
}
