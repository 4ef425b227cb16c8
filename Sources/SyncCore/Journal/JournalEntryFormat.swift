import FoundationEssentials

/// How a ``JournalEntry`` is kept as a record of ``SyncJournal/collection``.
enum JournalEntryFormat {
    /// The node journal records are stamped with.
    static let node: PeerID = "anchorage.journal"

    static func record(_ entry: JournalEntry, key: RecordKey) -> SyncRecord {
        var fields: [String: SyncValue] = [
            "collection": .string(entry.key.collection.rawValue),
            "id": .string(entry.key.id.rawValue),
            "action": .string(entry.action.rawValue),
            "recordedAt": .date(entry.recordedAt),
            "sequence": .integer(entry.sequence),
            "local": value(of: entry.local),
        ]
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

    static func entry(_ record: SyncRecord) throws -> JournalEntry {
        let fields = record.fields
        guard let collection = fields["collection"]?.stringValue, let id = fields["id"]?.stringValue,
            let action = fields["action"]?.stringValue.flatMap(JournalAction.init(rawValue:)),
            case .date(let recordedAt)? = fields["recordedAt"], let sequence = fields["sequence"]?.integerValue,
            let local = fields["local"]
        else { throw corrupt(record) }
        let key = RecordKey(collection: CollectionID(collection), id: RecordID(id))
        var entry = JournalEntry(
            key: key, action: action, recordedAt: recordedAt, local: try syncRecord(local, key: key, of: record),
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
        StoreError(.corrupt, "the journal entry \(record.id) cannot be read by this version of Anchorage")
    }
}
