/// A value made once, on first use, by async work — a server the tests share, say — that every
/// caller awaits without blocking a thread.
///
/// A `static let` whose initializer starts a server holds the first caller's thread, and every
/// other caller's, until the server is up: with a cooperative pool as wide as the machine has
/// cores, two such callers stop every test in the process for as long as the start takes. With
/// `MadeOnce`, the callers that come while the value is being made suspend instead.
public final class MadeOnce<Value: Sendable>: Sendable {
    private let task: Task<Value, Never>

    /// Starts making the value at once, in a task of its own.
    public init(_ make: @escaping @Sendable () async -> Value) {
        task = Task { await make() }
    }

    /// The value, once it is made.
    public var value: Value {
        get async { await task.value }
    }
}
