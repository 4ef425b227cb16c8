extension ConflictPolicy where Self == ServerWinsPolicy {
    /// The server's version always wins: `policy: .serverWins`.
    public static var serverWins: ServerWinsPolicy { ServerWinsPolicy() }
}

extension ConflictPolicy where Self == ClientWinsPolicy {
    /// The client's version always wins: `policy: .clientWins`.
    public static var clientWins: ClientWinsPolicy { ClientWinsPolicy() }
}

extension ConflictPolicy where Self == NewestWinsPolicy {
    /// The later version wins: `policy: .newestWins`.
    public static var newestWins: NewestWinsPolicy { NewestWinsPolicy() }
}

extension ConflictPolicy where Self == FieldMergePolicy {
    /// A field-by-field three-way merge: `policy: .fieldMerge()`.
    /// - Parameters:
    ///   - fallback: Decides fields changed on both sides, and records without a base.
    ///   - deletionRule: What happens when one side deleted the record and the other changed it.
    public static func fieldMerge(
        fallback: any ConflictPolicy = NewestWinsPolicy(),
        deletionRule: FieldMergePolicy.DeletionRule = .modificationWins
    ) -> FieldMergePolicy {
        FieldMergePolicy(fallback: fallback, deletionRule: deletionRule)
    }
}

extension ConflictPolicy where Self == DeferredPolicy {
    /// Hands each conflict to `handler`: `policy: .deferred { conflict in … }`.
    public static func deferred(_ handler: @escaping DeferredPolicy.Handler) -> DeferredPolicy {
        DeferredPolicy(handler)
    }
}
