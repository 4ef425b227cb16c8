/// Hands every conflict to the application — the "ask the user" hook.
///
/// The handler sees the whole ``Conflict`` (both versions and, when the stack
/// keeps one, the base) and answers with a ``Resolution``. It may show a
/// dialog and wait; it may also answer ``Resolution/deferred`` to keep both
/// versions and decide later, or ``Resolution/keepBoth`` to keep a copy.
///
/// ```swift
/// let policy = DeferredPolicy { conflict in
///     await conflictInbox.ask(about: conflict)   // the app's own UI
/// }
/// let merge = FieldMergePolicy(fallback: policy)   // ask only about fields changed on both sides
/// ```
public struct DeferredPolicy: ConflictPolicy {
    /// The application's decision for one conflict.
    public typealias Handler = @Sendable (Conflict) async -> Resolution

    private let handler: Handler

    /// Makes the policy.
    /// - Parameter handler: Decides each conflict; called once per conflict, possibly concurrently.
    public init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// The handler's answer.
    public func resolve(_ conflict: Conflict) async -> Resolution {
        await handler(conflict)
    }
}
