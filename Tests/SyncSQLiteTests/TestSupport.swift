import Foundation
import SyncCore
import SyncSQLite

/// A directory of its own under the system's temporary directory, for database files.
struct TemporaryDirectory: Sendable {
    /// The directory's path.
    let path: String

    /// Makes a fresh, empty directory.
    init() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("anchorage-sqlite-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    /// The path of `name` inside the directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// Removes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A record of collection `notes` with a whole-second version time.
func note(
    _ id: RecordID, _ fields: [String: SyncValue] = [:], collection: CollectionID = "notes", deleted: Bool = false,
    second: Int = 0
) -> SyncRecord {
    SyncRecord(
        collection: collection, id: id, fields: fields, isDeleted: deleted,
        version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(second)), node: "tests"))
}

/// Commits `records` in one transaction of `account`.
func put(_ records: [SyncRecord], in store: any SyncStore, for account: AccountID = "ada") async throws {
    try await store.transaction(for: account) { tx in
        for record in records { try await tx.put(record) }
    }
}

/// Every change of `account` after `position`, in one batch.
func allChanges(
    of store: any SyncStore, for account: AccountID = "ada", after position: ChangePosition = .start
) async throws -> [StoredRecord] {
    try await store.changes(for: account, after: position, in: nil, limit: 1_000_000).records
}

/// The error thrown from transaction bodies to test rollback.
struct RollbackProbe: Error {}
