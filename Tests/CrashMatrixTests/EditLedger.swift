import SyncCore
import SyncTesting

/// One edit the application makes on the device: a new record, new fields for
/// a live one, or the deletion of a live one. Records are named by their
/// `name` field, which every version carries, so a record is found by content
/// on any device, whatever id that device's stack gives it.
enum Edit: Sendable {
    case add(name: String, fields: [String: SyncValue])
    case modify(name: String, fields: [String: SyncValue])
    case delete(name: String)

    /// The name of the record the edit is made to.
    var name: String {
        switch self {
        case .add(let name, _), .modify(let name, _), .delete(let name): name
        }
    }
}

/// What the application has been told is saved: every record's last fields,
/// and the records it deleted. The edits it makes are drawn from a seeded
/// generator.
struct EditLedger {
    /// The live records by name: their last fields.
    private(set) var live: [String: [String: SyncValue]] = [:]
    /// The records deleted after they were added.
    private(set) var deleted: Set<String> = []
    /// Every edit recorded so far.
    private(set) var editCount = 0
    private var liveNames: [String] = []
    private var nextNumber = 0

    /// `count` new edits, recorded as saved: with `addsOnly`, new records; otherwise
    /// six in ten new records, three modifications and one deletion of live records
    /// (most of them ones the server already has from an earlier sync). Once there are
    /// twice `count` live records, three in ten are new records, four modifications and
    /// three deletions, so the data, and with it the length of a sync, stops growing.
    ///
    /// The caller writes them through the stack's client and requires every write
    /// to return: an edit that did not return fails the test, so the ledger never
    /// holds an edit the application was not told about.
    mutating func nextBatch(_ count: Int, addsOnly: Bool = false, using random: inout SeededGenerator) -> [Edit] {
        (0..<count).map { _ in
            let roll = addsOnly || liveNames.isEmpty ? 0 : Int.random(in: 0..<10, using: &random)
            let (adds, modifications) = liveNames.count < 2 * count ? (6, 3) : (3, 4)
            switch roll {
            case 0..<adds: return add()
            case adds..<(adds + modifications): return modify(at: Int.random(in: 0..<liveNames.count, using: &random))
            default: return delete(at: Int.random(in: 0..<liveNames.count, using: &random))
            }
        }
    }

    private mutating func add() -> Edit {
        nextNumber += 1
        let name = "record-\(nextNumber)"
        let fields = Self.fields(name: name, number: nextNumber, revision: 1)
        live[name] = fields
        liveNames.append(name)
        editCount += 1
        return .add(name: name, fields: fields)
    }

    private mutating func modify(at index: Int) -> Edit {
        let name = liveNames[index]
        let old = live[name] ?? [:]
        let fields = Self.fields(
            name: name, number: Int(old["pk"]?.integerValue ?? 0), revision: Int(old["revision"]?.integerValue ?? 0) + 1)
        live[name] = fields
        editCount += 1
        return .modify(name: name, fields: fields)
    }

    private mutating func delete(at index: Int) -> Edit {
        let name = liveNames.remove(at: index)
        live[name] = nil
        deleted.insert(name)
        editCount += 1
        return .delete(name: name)
    }

    /// The fields of revision `revision` of record `number`: its name, the
    /// primary key appSync's `booking` type needs, and a note that changes with
    /// every revision.
    private static func fields(name: String, number: Int, revision: Int) -> [String: SyncValue] {
        [
            "name": .string(name), "pk": .integer(Int64(number)), "revision": .integer(Int64(revision)),
            "note": .string("revision \(revision) of \(name)"),
        ]
    }

    /// How `records` (one device's live records, as id and fields) differ from the
    /// ledger: names held more than once, live names missing, deleted or unknown
    /// names present, and records whose fields are not the last ones saved.
    func differences(from records: [(id: String, fields: [String: SyncValue])]) -> Differences {
        var byName: [String: [(id: String, fields: [String: SyncValue])]] = [:]
        for record in records {
            byName[record.fields["name"]?.stringValue ?? "(no name: \(record.id))", default: []].append(record)
        }
        var differences = Differences()
        for (name, copies) in byName.sorted(by: { $0.key < $1.key }) {
            if copies.count > 1 {
                differences.duplicated.append("\(name) ×\(copies.count) (\(copies.map(\.id).sorted()))")
            }
            guard let expected = live[name] else {
                differences.unexpected.append(deleted.contains(name) ? "\(name) (deleted)" : name)
                continue
            }
            if let stale = copies.first(where: { $0.fields != expected }) {
                func revision(_ fields: [String: SyncValue]) -> String { fields["revision"].map { "\($0)" } ?? "none" }
                differences.stale.append("\(name): revision \(revision(stale.fields)), saved \(revision(expected))")
            }
        }
        differences.missing = live.keys.filter { byName[$0] == nil }.sorted()
        return differences
    }

    /// How a device's records differ from what the application saved.
    struct Differences: CustomStringConvertible {
        /// Records held more than once, with the ids of the copies.
        var duplicated: [String] = []
        /// Live records the device does not hold.
        var missing: [String] = []
        /// Records the device holds that are deleted, or that the application never saved.
        var unexpected: [String] = []
        /// Records whose fields are not the last ones saved.
        var stale: [String] = []

        var isEmpty: Bool { duplicated.isEmpty && missing.isEmpty && unexpected.isEmpty && stale.isEmpty }

        var description: String {
            func list(_ title: String, _ names: [String]) -> String? {
                guard !names.isEmpty else { return nil }
                let more = names.count > 10 ? ", …" : ""
                return "\(names.count) \(title): " + names.prefix(10).joined(separator: ", ") + more
            }
            return [
                list("duplicated", duplicated), list("missing", missing), list("present but deleted or unknown", unexpected),
                list("not at their last revision", stale),
            ].compactMap { $0 }.joined(separator: "; ")
        }
    }
}
