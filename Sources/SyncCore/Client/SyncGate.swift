/// Lets one sync of a client run at a time: a second sync started while one
/// runs waits until it ends, and syncs start in the order they were asked for.
///
/// ```swift
/// public actor MyClient {
///     private let gate = SyncGate()
///     public func sync() async throws -> Report {
///         try await gate.run { try await self.pullThenPush() }
///     }
/// }
/// ```
///
/// Only syncs wait at the gate: local reads and writes go on while a sync
/// runs. The body runs in the caller's isolation (the client actor's), so it
/// may touch the actor's state. A gate is not reentrant — a body that runs
/// the same gate again waits for itself forever — so a sync that calls
/// another sync calls the inner work, not the gated method.
public final class SyncGate: Sendable {
    private enum Slot: Hashable, Sendable { case sync }

    private let locks = KeyedLocks<Slot>()

    /// What the syncs through this gate are doing, for a UI: each body's start, end and failure, and the
    /// requests and retries of the ``SyncEndpoint`` it sends through.
    public let status = SyncStatus()

    /// Makes an open gate.
    public init() {}

    /// Waits until no other body runs through this gate, then runs `body` and
    /// opens the gate to the next waiter, whether `body` returns or throws.
    /// - Throws: what `body` throws.
    public func run<Value>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Value
    ) async rethrows -> Value {
        await locks.acquire(.sync)
        defer { locks.release(.sync) }
        status.began()
        do {
            let value = try await SyncStatus.$running.withValue(status) { try await body() }
            status.succeeded(value)
            return value
        } catch {
            status.failed(error)
            throw error
        }
    }

    /// How many bodies wait for the one running, for tests that check the gate holds.
    package var waitingCount: Int { locks.waiterCount(.sync) }
}
