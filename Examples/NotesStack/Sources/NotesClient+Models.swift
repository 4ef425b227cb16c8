public import SyncCore

/// The typed API (``SyncCore/ModelRecords``, ``SyncCore/ObservableModelRecords``): a ``SyncCore/SyncModel``
/// whose ``SyncCore/SyncModel/modelName`` is `note` is a note, its `title` and `text` the note's, and its
/// other properties fields that travel with the note (``Note/otherFields``).
///
/// ```swift
/// struct TaggedNote: SyncModel {
///     static let modelName = "note"
///     var id = UUID().uuidString
///     var title: String
///     var text: String
///     var tags: [String] = []
/// }
/// try await client.save(TaggedNote(title: "Shopping", text: "milk", tags: ["home"]))
/// ```
extension NotesClient: ObservableModelRecords {
    /// The kind of record this stack keeps: `note`.
    public static let modelName = "note"

    /// The collection notes are stored in.
    public nonisolated func collection(ofKind kind: String) -> CollectionID { Note.collection }

    /// The fields of the note `id`, or `nil` when there is none, it is deleted, or `kind` is not `note`.
    public func storedFields(of kind: String, id: String) async throws -> [String: SyncValue]? {
        guard kind == Self.modelName, let note = try await note(id), !note.isDeleted else { return nil }
        return note.fields
    }

    /// Every live note's fields, in id order (none when `kind` is not `note`).
    public func allStoredFields(of kind: String) async throws -> [(id: String, fields: [String: SyncValue])] {
        guard kind == Self.modelName else { return [] }
        return try await notes().map { ($0.id, $0.fields) }
    }

    /// Saves the note `id` with `fields` as a local change.
    /// - Throws: ``SyncCore/StoreError`` `.invalidArgument` when `kind` is not `note`.
    public func saveFields(_ fields: [String: SyncValue], of kind: String, id: String) async throws {
        guard kind == Self.modelName else { throw StoreError(.invalidArgument, "the notes stack keeps notes, not \(kind)") }
        try await save(id: id, fields: fields)
    }

    /// Deletes the note `id` as a local change.
    public func deleteRecord(of kind: String, id: String) async throws {
        guard kind == Self.modelName else { throw StoreError(.invalidArgument, "the notes stack keeps notes, not \(kind)") }
        try await delete(id)
    }
}
