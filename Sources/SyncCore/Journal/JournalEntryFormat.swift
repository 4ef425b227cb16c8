#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A journal entry as its record holds it. An entry that names its record (``SyncJournal/recordLocalChange(_:writtenAs:without:at:basedOn:)``)
/// keeps no copy of the local version's fields: until ``JournalEntryFormat/resolved(_:with:)`` reads them from the
/// record, its `local` holds the key and the version only.
struct StoredEntry: Sendable {
    /// The entry; for one that names its record, `local` has no fields yet.
    var entry: JournalEntry
    /// For an entry that names its record: the record's columns that are not the local version's fields.
    var recordColumns: [String]?

    /// Whether `local` must be read from the record.
    var namesRecord: Bool { recordColumns != nil }
}

/// How a ``JournalEntry`` is kept as a record of ``SyncJournal/collection``.
///
/// Its fields are the entry's key (`collection`, `id`), `action`, `recordedAt`, `sequence`, the ArchCopy
/// (`archCopy`), an open conflict's `remote`, an `answer` (and `merged` fields), and the local version:
/// - `local`, a copy of it (fields, deletion, version), or
/// - `localIsRecord`, for an entry that names its record: the columns of the record that are not the local
///   version's fields (`without`), and the record's version when the entry was written (`modifiedAt`,
///   `node`), which the record must still have when the entry is read.
enum JournalEntryFormat {
    /// The node journal records are stamped with.
    static let node: PeerID = "anchorage.journal"

    static func record(_ stored: StoredEntry, key: RecordKey) -> SyncRecord {
        let entry = stored.entry
        var fields: [String: SyncValue] = [
            "collection": .string(entry.key.collection.rawValue),
            "id": .string(entry.key.id.rawValue),
            "action": .string(entry.action.rawValue),
            "recordedAt": .date(entry.recordedAt),
            "sequence": .integer(entry.sequence),
        ]
        if let columns = stored.recordColumns {
            fields["localIsRecord"] = [
                "without": .array(columns.map(SyncValue.string)),
                "modifiedAt": .date(entry.local.version.modifiedAt), "node": .string(entry.local.version.node.rawValue),
            ]
        } else {
            fields["local"] = value(of: entry.local)
        }
        if let archCopy = entry.archCopy { fields["archCopy"] = value(of: archCopy) }
        if let remote = entry.remote { fields["remote"] = value(of: remote) }
        switch entry.answer {
        case nil: break
        case .merged(let merged):
            fields["answer"] = "merged"
            fields["merged"] = .dictionary(merged)
        case let answer?:
            fields["answer"] = .string(answer.description)
        }
        return SyncRecord(
            collection: key.collection, id: key.id, fields: fields,
            version: RecordVersion(modifiedAt: entry.recordedAt, node: node))
    }

    /// The entry `record` holds, with its local version when the entry copied it.
    static func storedEntry(_ record: SyncRecord) throws -> StoredEntry {
        let fields = record.fields
        guard let collection = fields["collection"]?.stringValue, let id = fields["id"]?.stringValue,
            let action = fields["action"]?.stringValue.flatMap(JournalAction.init(rawValue:)),
            case .date(let recordedAt)? = fields["recordedAt"], let sequence = fields["sequence"]?.integerValue
        else { throw corrupt(record) }
        let key = RecordKey(collection: CollectionID(collection), id: RecordID(id))
        let local: SyncRecord
        var recordColumns: [String]?
        if let copy = fields["local"] {
            local = try syncRecord(copy, key: key, of: record)
        } else if let named = fields["localIsRecord"], case .array(let columns)? = named["without"],
            case .date(let modifiedAt)? = named["modifiedAt"], let node = named["node"]?.stringValue
        {
            recordColumns = try columns.map { column in
                guard let name = column.stringValue else { throw corrupt(record) }
                return name
            }
            local = SyncRecord(
                collection: key.collection, id: key.id, fields: [:], version: RecordVersion(modifiedAt: modifiedAt, node: PeerID(node)))
        } else {
            throw corrupt(record)
        }
        var entry = JournalEntry(
            key: key, action: action, recordedAt: recordedAt, local: local,
            archCopy: try fields["archCopy"].map { try version($0, key: key, of: record) }, sequence: sequence)
        entry.remote = try fields["remote"].map { try version($0, key: key, of: record) }
        switch fields["answer"]?.stringValue {
        case nil: break
        case "mine": entry.answer = .keepMine
        case "theirs": entry.answer = .takeTheirs
        case "both": entry.answer = .keepBoth
        case "merged": entry.answer = .merged(fields["merged"]?.dictionaryValue ?? [:])
        default: throw corrupt(record)
        }
        return StoredEntry(entry: entry, recordColumns: recordColumns)
    }

    /// The sequence of the entry `stored` holds, read without the rest of the entry.
    /// - Throws: ``StoreError/Code/corrupt`` when the record holds no entry's sequence.
    static func sequence(of stored: EncodedStoredRecord) throws -> Int64 {
        guard let sequence = try fields(["sequence"], of: stored)[0]?.integerValue else { throw corrupt(stored.key) }
        return sequence
    }

    /// The pending change the entry `stored` holds: its key, its sequence and whether a conflict holds it
    /// back, read without the rest of the entry.
    /// - Throws: ``StoreError/Code/corrupt`` when the record does not hold them.
    static func pendingChange(_ stored: EncodedStoredRecord) throws -> PendingChange {
        let values = try fields(["collection", "id", "sequence", "remote"], of: stored)
        guard let collection = values[0]?.stringValue, let id = values[1]?.stringValue, let sequence = values[2]?.integerValue else {
            throw corrupt(stored.key)
        }
        // Ready to send while no conflict's remote version holds it back (``JournalEntry/isReadyToSend``).
        return PendingChange(
            key: RecordKey(collection: CollectionID(collection), id: RecordID(id)), sequence: sequence, isReadyToSend: values[3] == nil)
    }

    /// The values of the entry fields named in `names`, read from `stored` without the others.
    private static func fields(_ names: [String], of stored: EncodedStoredRecord) throws -> [SyncValue?] {
        try StoredValueFormat.readFields(names, removing: [], from: [UInt8](stored.fields)).values
    }

    /// The entry with its local version: for an entry that names its record, `record` (the record it names,
    /// as the transaction reads it) without the columns that are not the local version's fields.
    /// - Throws: ``StoreError/Code/corrupt`` when the record is gone or was written since without the entry.
    static func resolved(_ stored: StoredEntry, with record: StoredRecord?) throws -> JournalEntry {
        guard let columns = stored.recordColumns else { return stored.entry }
        var entry = stored.entry
        guard let record, record.record.version == entry.local.version else {
            throw StoreError(
                .corrupt, "the journal entry of \(entry.key) names a record that was written since without it")
        }
        var fields = record.record.fields
        for column in columns { fields.removeValue(forKey: column) }
        entry.local = SyncRecord(
            collection: entry.key.collection, id: entry.key.id, fields: fields, isDeleted: record.record.isDeleted,
            version: entry.local.version)
        return entry
    }

    private static func value(of record: SyncRecord) -> SyncValue {
        [
            "fields": .dictionary(record.fields), "isDeleted": .bool(record.isDeleted),
            "modifiedAt": .date(record.version.modifiedAt), "node": .string(record.version.node.rawValue),
        ]
    }

    private static func value(of version: ServerVersion) -> SyncValue {
        var value: [String: SyncValue] = ["record": value(of: version.record)]
        if let token = version.token { value["token"] = token }
        return .dictionary(value)
    }

    private static func syncRecord(_ value: SyncValue, key: RecordKey, of stored: SyncRecord) throws -> SyncRecord {
        guard let fields = value["fields"]?.dictionaryValue, let isDeleted = value["isDeleted"]?.boolValue,
            case .date(let modifiedAt)? = value["modifiedAt"], let node = value["node"]?.stringValue
        else { throw corrupt(stored) }
        return SyncRecord(
            collection: key.collection, id: key.id, fields: fields, isDeleted: isDeleted,
            version: RecordVersion(modifiedAt: modifiedAt, node: PeerID(node)))
    }

    private static func version(_ value: SyncValue, key: RecordKey, of stored: SyncRecord) throws -> ServerVersion {
        guard let record = value["record"] else { throw corrupt(stored) }
        return ServerVersion(record: try syncRecord(record, key: key, of: stored), token: value["token"])
    }

    private static func corrupt(_ record: SyncRecord) -> StoreError {
        corrupt(record.key)
    }

    private static func corrupt(_ key: RecordKey) -> StoreError {
        StoreError(.corrupt, "the journal entry \(key.id) cannot be read by this version of Anchorage")
    }
}
