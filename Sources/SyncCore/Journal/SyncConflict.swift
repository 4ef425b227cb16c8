#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A conflict waiting for the application: everything a person needs to
/// decide, and the choices.
///
/// ```swift
/// for conflict in try await store.openConflicts(for: account) {
///     show(conflict.base, conflict.local, conflict.remote)   // the app's own UI
/// }
/// try await store.answerConflict(conflict.id, with: .keepBoth, for: account)
/// try await client.sync()                                    // carries the answer out
/// ```
public struct SyncConflict: Sendable, Hashable, Identifiable {
    /// The item's key as text, `collection/id`.
    public var id: String { key.description }
    /// The item.
    public var key: RecordKey
    /// The version both sides started from (the ArchCopy); `nil` when the server did not have the item.
    public var base: SyncRecord?
    /// The item as it is on this device.
    public var local: SyncRecord
    /// The server's version.
    public var remote: SyncRecord
    /// The server's name for its version, when the protocol has one.
    public var remoteToken: SyncValue?
    /// What the local change did.
    public var localAction: JournalAction
    /// When the local change happened, by the device's clock.
    public var localTime: Date
    /// When the server's version was made, by its writer's clock.
    public var remoteTime: Date
    /// The answer already given, which the next sync carries out; `nil` while it waits for one.
    public var answer: ConflictAnswer?

    /// What the application may answer: keep mine, take theirs, keep both, or
    /// merged fields (``ConflictAnswer/merged(_:)``).
    public static let choices: [String] = ["mine", "theirs", "both", "merged"]

    /// The conflict an entry holds, or `nil` when it holds none.
    public init?(_ entry: JournalEntry) {
        guard let remote = entry.remote else { return nil }
        self.key = entry.key
        self.base = entry.archCopy?.record
        self.local = entry.local
        self.remote = remote.record
        self.remoteToken = remote.token
        self.localAction = entry.action
        self.localTime = entry.recordedAt
        self.remoteTime = remote.record.version.modifiedAt
        self.answer = entry.answer
    }

    /// Whether the conflict still waits for the application.
    public var awaitsAnswer: Bool { answer == nil }
}

/// Asks the user: every conflict stays open in the device's journal, with
/// base, local and remote versions, until the application answers
/// (``SyncStore/answerConflict(_:with:for:)``); the next sync carries the
/// answer out.
///
/// ```swift
/// let client = AquasyncClient(store: store, transport: transport, codec: JSONCodec(),
///                             configuration: .init(conflictPolicy: .askUser))
/// ```
///
/// On a server, where nobody can be asked, a stack treats it as
/// ``Resolution/deferred``.
public struct AskUserPolicy: ConflictPolicy {
    /// Makes the policy.
    public init() {}

    /// Always ``Resolution/deferred``.
    public func resolve(_ conflict: Conflict) async -> Resolution { .deferred }
}

extension ConflictPolicy where Self == AskUserPolicy {
    /// Every conflict waits for the application's answer: `policy: .askUser`.
    public static var askUser: AskUserPolicy { AskUserPolicy() }
}
