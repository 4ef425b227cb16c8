import SyncCore

/// A conflict policy that never loses a word of a note.
///
/// ```swift
/// let server = NotesServer(store: store, codecs: codecs, conflictPolicy: NotesMergePolicy())
/// ```
///
/// - An edit wins over a deletion: a deleted note is easy to delete again, a
///   lost text is not.
/// - When both texts are the same, or one already holds the other (a merged
///   text meeting one of its parts again), that text wins, with the title of
///   the newer version.
/// - Otherwise the merged note holds both texts, the older first, under the
///   newer version's title.
///
/// The answer depends only on the two versions, not on which side is
/// `local`, so every node that asks gets the same note.
public struct NotesMergePolicy: ConflictPolicy {
    /// Makes the policy.
    public init() {}

    /// Keeps the edit over a deletion, and both texts when they differ.
    public func resolve(_ conflict: Conflict) async -> Resolution {
        let (local, remote) = (conflict.local, conflict.remote)
        if local.isDeleted != remote.isDeleted { return local.isDeleted ? .takeRemote : .keepLocal }
        if local.isDeleted { return local.version < remote.version ? .takeRemote : .keepLocal }

        let localText = local.fields["text"]?.stringValue ?? ""
        let remoteText = remote.fields["text"]?.stringValue ?? ""
        let localIsNewer = (remote.version, remoteText) < (local.version, localText)
        var merged = localIsNewer ? local : remote
        if localText.contains(remoteText) || remoteText.contains(localText) {
            merged.fields["text"] = .string(localText.count >= remoteText.count ? localText : remoteText)
        } else {
            merged.fields["text"] = .string(localIsNewer ? remoteText + "\n\n" + localText : localText + "\n\n" + remoteText)
        }
        if merged == local { return .keepLocal }
        if merged == remote { return .takeRemote }
        return .merged(merged)
    }
}
