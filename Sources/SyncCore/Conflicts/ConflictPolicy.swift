/// Decides what happens when the two sides of a sync changed the same record.
///
/// A stack detects the conflict (each protocol has its own way: counters,
/// anchors, timestamps) and asks the policy; the policy only decides.
/// Built-in policies: ``ServerWinsPolicy``, ``ClientWinsPolicy``,
/// ``NewestWinsPolicy``, ``FieldMergePolicy`` and ``DeferredPolicy`` (an async
/// handler, such as asking the user), also spelled `.serverWins`,
/// `.clientWins`, `.newestWins`, `.fieldMerge()` and `.deferred { … }`.
///
/// Policies that compare values must give the same answer on every node,
/// whichever side is "local", so replicas converge.
public protocol ConflictPolicy: Sendable {
    /// The resolution of one conflict.
    func resolve(_ conflict: Conflict) async -> Resolution
}

/// Which side of a sync is resolving a conflict.
public enum SyncSide: String, Sendable, Hashable, Codable {
    /// The server, holding the shared copy.
    case server
    /// A client (device), holding its own copy.
    case client
}

/// Two versions of one record that both changed since they last agreed.
public struct Conflict: Sendable, Hashable {
    /// The version held by the side that resolves.
    public var local: SyncRecord
    /// The version that arrived from the other side.
    public var remote: SyncRecord
    /// The version both started from, when the stack knows it.
    public var base: SyncRecord?
    /// The side that resolves: ``local`` is this side's version.
    public var resolvingSide: SyncSide

    /// Makes a conflict.
    public init(local: SyncRecord, remote: SyncRecord, base: SyncRecord? = nil, resolvingSide: SyncSide) {
        self.local = local
        self.remote = remote
        self.base = base
        self.resolvingSide = resolvingSide
    }

    /// The server's version.
    public var serverVersion: SyncRecord { resolvingSide == .server ? local : remote }
    /// The client's version.
    public var clientVersion: SyncRecord { resolvingSide == .server ? remote : local }
}

/// What to do with a conflict.
public enum Resolution: Sendable, Hashable {
    /// Keep the resolving side's version; the other side will take it.
    case keepLocal
    /// Take the other side's version.
    case takeRemote
    /// Store this merged record on both sides.
    case merged(SyncRecord)
    /// Keep both: the remote version under its id, the local one as a copy
    /// under a new id (the stack chooses it and reports it).
    case keepBoth
    /// Neither side decides now: the stack keeps both versions and asks the
    /// application (for example the user) later.
    case deferred
}
