/// The server's version always wins: the seed's "server priority".
///
/// ```swift
/// let client = AppSyncClient(…, configuration: .init(conflictPolicy: .serverWins))
/// ```
public struct ServerWinsPolicy: ConflictPolicy {
    /// Makes the policy.
    public init() {}

    /// Keeps the server's version, on whichever side resolves.
    public func resolve(_ conflict: Conflict) async -> Resolution {
        conflict.resolvingSide == .server ? .keepLocal : .takeRemote
    }
}

/// The client's version always wins: the seed's "client priority".
///
/// ```swift
/// let client = AppSyncClient(…, configuration: .init(conflictPolicy: .clientWins))
/// ```
public struct ClientWinsPolicy: ConflictPolicy {
    /// Makes the policy.
    public init() {}

    /// Keeps the client's version, on whichever side resolves.
    public func resolve(_ conflict: Conflict) async -> Resolution {
        conflict.resolvingSide == .client ? .keepLocal : .takeRemote
    }
}
