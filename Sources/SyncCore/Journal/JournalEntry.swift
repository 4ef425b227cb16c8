#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a local write did to an item.
public enum JournalAction: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The item was created on this device.
    case add
    /// The item's fields changed.
    case modify
    /// The item was deleted.
    case delete
    /// The item moved (a file renamed or put in another folder).
    case move

    /// The action that stays pending when `next` follows this one on the same
    /// item before the server heard of either: a new item edited again is
    /// still new; an item deleted and then written again is modified.
    public func followed(by next: JournalAction) -> JournalAction {
        switch (self, next) {
        case (.add, .modify), (.add, .move): .add
        case (.delete, .add), (.delete, .modify): .modify
        default: next
        }
    }

    /// The action's name.
    public var description: String { rawValue }
}

/// A version of an item as the server holds it: the record (in the stack's
/// neutral form, the application's fields only) and the server's version
/// token — an ETag, an update sequence timestamp, a counter or an anchor,
/// whatever the protocol names versions by.
public struct ServerVersion: Sendable, Hashable {
    /// The item as the server holds it; a tombstone when the server deleted it.
    public var record: SyncRecord
    /// The server's name for this version, when the protocol has one.
    public var token: SyncValue?

    /// Makes a server version.
    public init(record: SyncRecord, token: SyncValue? = nil) {
        self.record = record
        self.token = token
    }

    /// Whether this version holds what `other` holds: both deleted, or both
    /// live with equal fields. Times, nodes and tokens do not count.
    public func hasSameContent(as other: SyncRecord) -> Bool {
        record.hasSameContent(as: other)
    }
}

extension SyncRecord {
    /// Whether two versions of an item hold the same: both deleted, or both
    /// live with equal fields. Times and nodes do not count.
    public func hasSameContent(as other: SyncRecord) -> Bool {
        isDeleted == other.isDeleted && (isDeleted || fields == other.fields)
    }
}

/// A local change waiting for the server, kept in the device's store in the
/// same transaction as the change itself (see ``SyncJournal``).
///
/// ``archCopy`` is the version the change was based on — the item as the
/// device last had it from the server — and stays the same however many
/// times the item is changed again before the server acknowledges it. That
/// is what makes conflicts exact: the server's version differs from the
/// ArchCopy or it does not.
public struct JournalEntry: Sendable, Hashable, Identifiable {
    /// The item.
    public var key: RecordKey
    /// What the pending change does, all local actions since the ArchCopy taken together.
    public var action: JournalAction
    /// When the latest local action happened, by the device's clock.
    public var recordedAt: Date
    /// The item as it is locally after the change (the application's fields only).
    public var local: SyncRecord
    /// The version the change was based on; `nil` when the server did not have the item.
    public var archCopy: ServerVersion?
    /// Grows with every local action on any item: a sync acknowledges the
    /// sequence it sent, so a change made while it was in flight stays pending.
    public var sequence: Int64
    /// The server's version that conflicts with the change, while the conflict is open.
    public var remote: ServerVersion?
    /// The application's answer to the open conflict, carried out by the next sync.
    public var answer: ConflictAnswer?

    /// Makes an entry.
    public init(
        key: RecordKey, action: JournalAction, recordedAt: Date, local: SyncRecord, archCopy: ServerVersion?, sequence: Int64,
        remote: ServerVersion? = nil, answer: ConflictAnswer? = nil
    ) {
        self.key = key
        self.action = action
        self.recordedAt = recordedAt
        self.local = local
        self.archCopy = archCopy
        self.sequence = sequence
        self.remote = remote
        self.answer = answer
    }

    /// The item's key as text, `collection/id`: the id the application and
    /// `anchorage conflicts` name a conflict by.
    public var id: String { key.description }

    /// Whether the entry waits for the application to answer a conflict.
    public var awaitsAnswer: Bool { remote != nil && answer == nil }

    /// Whether a sync may send the change: no conflict is open (an answered one stays open until a
    /// sync carries the answer out, which closes it).
    public var isReadyToSend: Bool { remote == nil }

    /// How a version arriving from the server relates to this pending change.
    public func classify(_ incoming: ServerVersion) -> IncomingVersion {
        if let archCopy, incoming.hasSameContent(as: archCopy.record) { return .unchanged }
        if incoming.hasSameContent(as: local) { return .sameAsLocal }
        return .conflict
    }
}

/// A pending change as a push sends it (``SyncJournal/pendingChanges(after:limit:)``): the item, the
/// sequence to acknowledge it with, and whether it may be sent.
public struct PendingChange: Sendable, Hashable {
    /// The item.
    public var key: RecordKey
    /// The entry's sequence when read: ``SyncJournal/acknowledge(_:sequence:holding:)`` takes it.
    public var sequence: Int64
    /// Whether a sync may send it (``JournalEntry/isReadyToSend``).
    public var isReadyToSend: Bool

    /// Makes a pending change.
    public init(key: RecordKey, sequence: Int64, isReadyToSend: Bool) {
        self.key = key
        self.sequence = sequence
        self.isReadyToSend = isReadyToSend
    }
}

/// How a version that arrives from the server relates to a pending local
/// change of the same item (``JournalEntry/classify(_:)``).
public enum IncomingVersion: Sendable, Hashable {
    /// The server still holds the ArchCopy: the local change goes up as it is.
    case unchanged
    /// The server already holds what the device holds: nothing is left to send.
    case sameAsLocal
    /// The server's version moved away from the ArchCopy to something else than the local change.
    case conflict
}

/// The application's answer to a conflict.
public enum ConflictAnswer: Sendable, Hashable, CustomStringConvertible {
    /// Keep the local version: it goes to the server, based on the server's version.
    case keepMine
    /// Take the server's version: the local change is dropped.
    case takeTheirs
    /// Keep both: the server's version under the item's id, the local one as a new item.
    case keepBoth
    /// Store these fields, based on the server's version.
    case merged([String: SyncValue])

    /// The answer a policy's resolution stands for; `nil` for ``Resolution/deferred``
    /// (ask the application). A merged tombstone keeps the side that deleted.
    /// - Parameters:
    ///   - resolution: What the policy decided, with the local version as `local`.
    ///   - localIsDeleted: Whether the local version is a deletion.
    public init?(_ resolution: Resolution, localIsDeleted: Bool) {
        switch resolution {
        case .keepLocal: self = .keepMine
        case .takeRemote: self = .takeTheirs
        case .keepBoth: self = .keepBoth
        case .deferred: return nil
        case .merged(let record):
            if record.isDeleted {
                self = localIsDeleted ? .keepMine : .takeTheirs
            } else {
                self = .merged(record.fields)
            }
        }
    }

    /// `mine`, `theirs`, `both` or `merged`.
    public var description: String {
        switch self {
        case .keepMine: "mine"
        case .takeTheirs: "theirs"
        case .keepBoth: "both"
        case .merged: "merged"
        }
    }
}
