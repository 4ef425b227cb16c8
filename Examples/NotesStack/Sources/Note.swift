import Foundation
import SyncCore

/// A note: what the application reads and writes, and what travels on the wire.
///
/// In a store a note is a ``SyncCore/SyncRecord`` of the collection `notes`:
/// the title and text are its fields, the time and device of the last change
/// its ``SyncCore/RecordVersion``, and a deleted note is a tombstone.
public struct Note: Codable, Sendable, Hashable, Identifiable {
    /// The note's id, a UUID string made by the device that created it.
    public var id: String
    /// The title.
    public var title: String
    /// The text.
    public var text: String
    /// Whether the note was deleted.
    public var isDeleted: Bool
    /// When the note was last changed, by the clock of the device that changed it.
    public var modifiedAt: Date
    /// The device that changed it last.
    public var modifiedBy: String

    /// Makes a note.
    public init(
        id: String, title: String, text: String, isDeleted: Bool = false, modifiedAt: Date, modifiedBy: String
    ) {
        self.id = id
        self.title = title
        self.text = text
        self.isDeleted = isDeleted
        self.modifiedAt = modifiedAt
        self.modifiedBy = modifiedBy
    }
}

extension Note {
    /// The collection notes are stored in, on the server and on every device.
    static let collection: CollectionID = "notes"

    /// The store key of the note `id`.
    static func key(_ id: String) -> RecordKey { RecordKey(collection: collection, id: RecordID(id)) }

    /// The note a stored record holds.
    init(_ record: SyncRecord) {
        self.init(
            id: record.id.rawValue, title: record.fields["title"]?.stringValue ?? "",
            text: record.fields["text"]?.stringValue ?? "", isDeleted: record.isDeleted,
            modifiedAt: record.version.modifiedAt, modifiedBy: record.version.node.rawValue)
    }

    /// The note as a record to store.
    var record: SyncRecord {
        SyncRecord(
            collection: Self.collection, id: RecordID(id),
            fields: isDeleted ? [:] : ["title": .string(title), "text": .string(text)], isDeleted: isDeleted,
            version: RecordVersion(modifiedAt: modifiedAt, node: PeerID(modifiedBy)))
    }

    /// Whether two notes say the same: title, text and deletion, whoever wrote them and when.
    func hasSameContent(as other: Note) -> Bool {
        title == other.title && text == other.text && isDeleted == other.isDeleted
    }
}
