/// The server's version always wins: the seed's "server priority".
///
/// ```swift
/// let client = AppSyncClient(…, policy: ServerWinsPolicy())
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
public struct ClientWinsPolicy: ConflictPolicy {
    /// Makes the policy.
    public init() {}

    /// Keeps the client's version, on whichever side resolves.
    public func resolve(_ conflict: Conflict) async -> Resolution {
        conflict.resolvingSide == .client ? .keepLocal : .takeRemote
    }
}

/// The version changed last wins: the seed's "timestamp priority".
///
/// Versions compare by ``RecordVersion`` — modification time, then node name
/// — so two versions with the same time still have one winner, and every
/// node picks the same one whichever side it is on.
public struct NewestWinsPolicy: ConflictPolicy {
    /// Makes the policy.
    public init() {}

    /// Keeps the later version; on an exact tie (same time and node) keeps the local one.
    public func resolve(_ conflict: Conflict) async -> Resolution {
        conflict.remote.version > conflict.local.version ? .takeRemote : .keepLocal
    }
}
