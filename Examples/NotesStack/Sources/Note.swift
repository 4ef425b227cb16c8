import Foundation
import SyncCore

/// A note: what the application reads and writes, and what travels on the wire.
///
/// In a store a note is a ``SyncCore/SyncRecord`` of the collection `notes`:
/// the title and text are its fields, beside any ``otherFields`` an app adds
/// (a typed model's properties: the client's `save(_:)` of a ``SyncCore/SyncModel``),
/// the time and device of the last change its ``SyncCore/RecordVersion``, and
/// a deleted note is a tombstone.
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
    /// Fields beside the title and text, which travel and are kept as they are (`nil` for none).
    public var otherFields: [String: SyncValue]?

    /// Makes a note.
    public init(
        id: String, title: String, text: String, isDeleted: Bool = false, modifiedAt: Date, modifiedBy: String,
        otherFields: [String: SyncValue]? = nil
    ) {
        self.id = id
        self.title = title
        self.text = text
        self.isDeleted = isDeleted
        self.modifiedAt = modifiedAt
        self.modifiedBy = modifiedBy
        self.otherFields = otherFields?.isEmpty == true ? nil : otherFields
    }
}

extension Note {
    /// The collection notes are stored in, on the server and on every device.
    static let collection: CollectionID = "notes"

    /// The store key of the note `id`.
    static func key(_ id: String) -> RecordKey { RecordKey(collection: collection, id: RecordID(id)) }

    /// The note a stored record holds.
    init(_ record: SyncRecord) {
        var others = record.fields
        others["title"] = nil
        others["text"] = nil
        self.init(
            id: record.id.rawValue, title: record.fields["title"]?.stringValue ?? "",
            text: record.fields["text"]?.stringValue ?? "", isDeleted: record.isDeleted,
            modifiedAt: record.version.modifiedAt, modifiedBy: record.version.node.rawValue, otherFields: others)
    }

    /// The note's fields: the title, the text and the other fields.
    var fields: [String: SyncValue] {
        (otherFields ?? [:]).merging(["title": .string(title), "text": .string(text)]) { _, own in own }
    }

    /// The note as a record to store.
    var record: SyncRecord {
        SyncRecord(
            collection: Self.collection, id: RecordID(id), fields: isDeleted ? [:] : fields, isDeleted: isDeleted,
            version: RecordVersion(modifiedAt: modifiedAt, node: PeerID(modifiedBy)))
    }

    /// Whether two notes say the same: title, text, other fields and deletion, whoever wrote them and when.
    func hasSameContent(as other: Note) -> Bool {
        title == other.title && text == other.text && isDeleted == other.isDeleted
            && (otherFields ?? [:]) == (other.otherFields ?? [:])
    }
}
