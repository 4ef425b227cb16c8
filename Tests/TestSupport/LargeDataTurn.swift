public import SyncCore

/// Lets one test that fills a store with a large data set (the row-count tests' 100,000 records) run at a
/// time, whichever test target it is in.
///
/// Each such test keeps a core busy for a minute or more in a debug build; three at once, beside the rest
/// of the suite, leave little of a two-core machine to the tests that wait on a server. The turn is a
/// ``SyncCore/SyncGate``: waiting for it suspends the task and blocks no thread.
///
/// ```swift
/// try await LargeDataTurn.gate.run { try await fillAndSync() }
/// ```
public enum LargeDataTurn {
    /// The one gate every such test goes through.
    public static let gate = SyncGate()
}
