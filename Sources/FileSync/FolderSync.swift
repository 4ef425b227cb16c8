public import Foundation
public import SyncCore

/// Keeps a local folder in sync with a folder on a WebDAV server, through the
/// device's journal, with the reactions of the seed's tables.
///
/// ```swift
/// let sync = FolderSync(folder: "/home/ada/Documents", client: client, store: try SQLiteStore(path: "files.sqlite"),
///                       account: "ada@files.example.com")
/// let report = try await sync.sync()          // scan, journal, then the server's changes
/// for question in report.questions { print(question) }  // answer with store.answerConflict(question.id, …)
/// ```
///
/// A sync: (1) scans the folder and records what changed since the last sync
/// as journal entries (add, modify, delete; ``move(_:to:)`` records a move);
/// (2) carries out the journal, each entry against the item the server holds
/// now, compared with the entry's ArchCopy (ETag); (3) lists the server's
/// folder and mirrors its changes, leaving items with pending entries alone.
/// The cache of what the server held (ETag, file id, modification time,
/// size) lives in the store beside the journal.
public struct FolderSync: Sendable {
    /// How conflicts are settled.
    public enum ConflictPolicy: String, Sendable, Hashable {
        /// Every question waits for the user's answer (the seed's "ask the user").
        case askUser = "ask"
        /// No question: the answer that loses nothing is taken (keep both copies, restore what
        /// one side deleted and the other changed, merge folders).
        case keepBoth = "both"
    }

    /// The collection of the journal entries and conflicts of files (ids are paths).
    public static let collection: CollectionID = "files"
    /// The collection of the cache of what the server held.
    public static let cacheCollection: CollectionID = "files.cache"

    /// The local folder.
    public let folder: String
    /// The WebDAV client of the server's folder.
    public let client: WebDAVClient
    /// The device's store (journal and cache).
    public let store: any SyncStore
    /// The account in the store.
    public let account: AccountID
    /// The device's name, in the names of conflict copies.
    public let device: String
    /// How conflicts are settled.
    public let policy: ConflictPolicy
    /// Called with the bytes and files moved so far (a progress bar).
    public let progress: (@Sendable (FileSyncProgress) -> Void)?
    /// Where every "now" of the sync comes from: the time of the changes a scan records, the stamp in a
    /// conflict copy's name.
    public let clock: any WallClock
    /// How many transfers (uploads, downloads, listings) a sync keeps in flight at once.
    public let transfers: Int
    /// Whether every sync asks for every file's ETag. When `false` (the default), a file the server lists
    /// with the modification time and size the device cached, described in a later second than that
    /// time, is taken as unchanged, so a server that digests files for their ETags reads only what changed.
    /// Turn it on for a server whose clients can set a file's modification time to an earlier one.
    public let comparesETags: Bool
    /// Lets one ``sync()`` run at a time (copies of this value share it): a second waits for the first.
    package let syncGate = SyncGate()

    /// Makes a folder sync.
    /// - Parameters:
    ///   - folder: The local folder.
    ///   - client: The WebDAV client of the server's folder.
    ///   - store: The device's store (journal and cache); keep one per synced folder.
    ///   - account: The account in the store.
    ///   - device: The device's name, in the names of conflict copies.
    ///   - policy: How conflicts are settled.
    ///   - clock: Where "now" comes from: the system's time, or a test's clock.
    ///   - transfers: How many transfers a sync keeps in flight at once (at least 1; by default 8).
    ///   - comparesETags: Whether every sync asks for every file's ETag (``comparesETags``).
    ///   - progress: Called with the bytes and files moved so far.
    public init(
        folder: String, client: WebDAVClient, store: any SyncStore, account: AccountID, device: String = "device",
        policy: ConflictPolicy = .askUser, clock: any WallClock = SystemWallClock(), transfers: Int = 8,
        comparesETags: Bool = false, progress: (@Sendable (FileSyncProgress) -> Void)? = nil
    ) {
        var folder = folder
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        self.folder = folder
        self.client = client
        self.store = store
        self.account = account
        self.device = device
        self.policy = policy
        self.progress = progress
        self.clock = clock
        self.transfers = max(1, transfers)
        self.comparesETags = comparesETags
    }

    var local: LocalFolder { LocalFolder(root: folder) }

    // MARK: User actions

    /// Moves or renames `source` to `destination` in the folder and records the move, made at `time`
    /// (by default now, by ``clock``).
    /// - Throws: ``WebDAVError`` when the local move fails, or ``StoreError``.
    public func move(_ source: String, to destination: String, at time: Date? = nil) async throws {
        let time = time ?? clock.now()
        try local.move(source, to: destination)
        let item = local.item(destination)
        try await store.transaction(for: account) { tx in
            let cached = try await Cache(tx).item(source)
            if let pending = try await tx.journal.entry(for: Self.key(source)), cached == nil || pending.action == .add {
                // Not on the server yet: the pending add moves with the item.
                try await tx.journal.remove(Self.key(source))
                try await tx.journal.recordLocalChange(
                    .add, local: Self.localRecord(destination, item, from: nil, at: time), at: time, basedOn: nil)
                return
            }
            try await tx.journal.recordLocalChange(
                .move, local: Self.localRecord(destination, item, from: source, at: time), at: time, basedOn: cached?.version)
        }
    }

    /// Records the changes found in the folder since the last sync as journal entries.
    /// - Throws: ``StoreError``.
    public func scan() async throws {
        let items = local.scan()
        let now = clock.now()
        try await store.transaction(for: account) { tx in
            let cache = Cache(tx)
            let cached = try await cache.all()
            var pending: [String: JournalEntry] = [:]
            for entry in try await tx.journal.entries(in: [Self.collection]) { pending[entry.key.id.rawValue] = entry }
            // Moves in flight: the item is at `to` here and at `from` on the server.
            var moved: [(to: String, from: String)] = []
            for entry in pending.values where entry.action == .move {
                if case .string(let from)? = entry.local.fields["from"] { moved.append((entry.key.id.rawValue, from)) }
            }
            func underMove(_ path: String) -> Bool { moved.contains { Self.isInside(path, $0.to) } }
            func sourceOfMove(_ path: String) -> Bool { moved.contains { Self.isInside(path, $0.from) } }
            var seen = Set<String>()
            for item in items {
                seen.insert(item.path)
                if underMove(item.path) { continue }
                let entry = pending[item.path]
                if let entry, entry.action != .delete, Self.sameStamp(entry.local, item) { continue }
                if let known = cached[item.path], known.isDirectory == item.isDirectory {
                    if entry == nil && (item.isDirectory || known.sameLocal(item)) { continue }
                    if item.isDirectory {
                        if entry?.action == .delete { try await tx.journal.remove(Self.key(item.path)) }
                        continue
                    }
                    try await tx.journal.recordLocalChange(
                        .modify, local: Self.localRecord(item.path, item, from: nil, at: now), at: now, basedOn: known.version)
                } else {
                    try await tx.journal.recordLocalChange(
                        .add, local: Self.localRecord(item.path, item, from: nil, at: now), at: now,
                        basedOn: cached[item.path]?.version)
                }
            }
            for (path, known) in cached where !seen.contains(path) && !sourceOfMove(path) {
                if pending[path]?.action == .delete { continue }
                // Inside a folder deleted too: the folder's delete covers it.
                let parent = WebDAVPath.parent(of: path)
                if !parent.isEmpty, cached[parent] != nil, !seen.contains(parent), !sourceOfMove(parent) {
                    if pending[path] != nil { try await tx.journal.remove(Self.key(path)) }
                    continue
                }
                try await tx.journal.recordLocalChange(
                    .delete, local: Self.localRecord(path, nil, from: nil, at: now).tombstone(version: Self.version(now)), at: now,
                    basedOn: known.version)
            }
        }
    }

    // MARK: Sync

    /// One sync: scan, carry out the journal, mirror the server's changes.
    /// - Returns: what happened, the notices and the questions waiting for the user.
    /// - Throws: ``WebDAVError`` when the server cannot be listed, ``StoreError``.
    /// A second sync started while one runs waits for it (``SyncCore/SyncGate``).
    public func sync() async throws -> FolderSyncReport {
        try await syncGate.run {
            var run = SyncRun(sync: self)
            try await scan()
            try await run.processJournal()
            try await run.processJournal()  // what the first pass re-queued (a renamed folder's items)
            try await run.fetchRemote()
            run.report.questions = try await questions()
            return run.report
        }
    }

    /// The questions waiting for the user.
    /// - Throws: ``StoreError``.
    public func questions() async throws -> [FileQuestion] {
        try await store.openConflicts(for: account).filter { $0.awaitsAnswer }.compactMap(FileQuestion.init)
    }

    // MARK: Records

    static func key(_ path: String) -> RecordKey { RecordKey(collection: collection, id: RecordID(path)) }

    static func version(_ date: Date) -> RecordVersion { RecordVersion(modifiedAt: date, node: "device") }

    /// The journal's local record of `item` at `path` (`nil`: gone), moved `from` a source; its version is the
    /// item's modification time, or `now` for an item without one.
    static func localRecord(_ path: String, _ item: LocalItem?, from source: String?, at now: Date) -> SyncRecord {
        var fields: [String: SyncValue] = [:]
        if let item {
            fields["directory"] = .bool(item.isDirectory)
            fields["size"] = .integer(item.size)
            fields["mtime"] = .integer(item.modifiedNanoseconds)
        }
        if let source { fields["from"] = .string(source) }
        return SyncRecord(
            collection: collection, id: RecordID(path), fields: fields, version: version(item?.modified ?? now))
    }

    static func sameStamp(_ record: SyncRecord, _ item: LocalItem) -> Bool {
        record.fields["mtime"] == .integer(item.modifiedNanoseconds) && record.fields["size"] == .integer(item.size)
            && record.fields["directory"] == .bool(item.isDirectory)
    }

    static func isInside(_ path: String, _ folder: String) -> Bool { path == folder || path.hasPrefix(folder + "/") }
}

/// Bytes and files moved so far in a sync, as ``FolderSync/progress`` hears of them.
public struct FileSyncProgress: Sendable, Hashable {
    /// Files uploaded or downloaded so far.
    public var files: Int
    /// Bytes uploaded or downloaded so far.
    public var bytes: Int64
    /// The file moving now.
    public var current: String
}

/// What a sync did.
public struct FolderSyncReport: Sendable, Hashable {
    /// Files uploaded.
    public var uploaded: [String] = []
    /// Files downloaded.
    public var downloaded: [String] = []
    /// Items deleted on the server.
    public var deletedOnServer: [String] = []
    /// Items deleted on the device because the server deleted them.
    public var deletedLocally: [String] = []
    /// Items moved on the server, as `from → to`.
    public var moved: [String] = []
    /// Folders made on the server.
    public var createdFolders: [String] = []
    /// Conflict copies made (keep both).
    public var conflictCopies: [String] = []
    /// What the user is told without being asked.
    public var notices: [FileNotice] = []
    /// The questions waiting for the user.
    public var questions: [FileQuestion] = []
    /// Bytes uploaded and downloaded.
    public var bytes: Int64 = 0

    /// Makes an empty report.
    public init() {}
}

/// One cached server item: what the server held when the device last synced
/// it, and how the local copy looked then.
struct CachedItem: Sendable, Hashable {
    var path: String
    var isDirectory: Bool
    var etag: String?
    var fileID: String?
    var modified: Date?
    var size: Int64?
    /// When the server described the item with this ETag, modification time and size (its answer's
    /// `Date`), if known.
    var seen: Date?
    var localModified: Int64
    var localSize: Int64

    init(_ server: WebDAVItem, local: LocalItem?) {
        path = server.path
        isDirectory = server.isDirectory
        etag = server.etag
        fileID = server.fileID
        modified = server.modified
        size = server.size
        seen = server.seen
        localModified = local?.modifiedNanoseconds ?? 0
        localSize = local?.size ?? 0
    }

    init?(_ record: SyncRecord) {
        guard !record.isDeleted, case .bool(let isDirectory)? = record.fields["directory"] else { return nil }
        path = record.id.rawValue
        self.isDirectory = isDirectory
        if case .string(let etag)? = record.fields["etag"] { self.etag = etag }
        if case .string(let id)? = record.fields["fileid"] { fileID = id }
        if case .date(let date)? = record.fields["modified"] { modified = date }
        if case .integer(let size)? = record.fields["size"] { self.size = size }
        if case .date(let date)? = record.fields["seen"] { seen = date }
        if case .integer(let value)? = record.fields["lmtime"] { localModified = value } else { localModified = 0 }
        if case .integer(let value)? = record.fields["lsize"] { localSize = value } else { localSize = 0 }
    }

    var serverFields: [String: SyncValue] {
        var fields: [String: SyncValue] = ["directory": .bool(isDirectory)]
        if let etag { fields["etag"] = .string(etag) }
        if let fileID { fields["fileid"] = .string(fileID) }
        if let modified { fields["modified"] = .date(modified) }
        if let size { fields["size"] = .integer(size) }
        return fields
    }

    var record: SyncRecord {
        var fields = serverFields
        if let seen { fields["seen"] = .date(seen) }
        fields["lmtime"] = .integer(localModified)
        fields["lsize"] = .integer(localSize)
        return SyncRecord(
            collection: FolderSync.cacheCollection, id: RecordID(path), fields: fields,
            version: FolderSync.version(modified ?? Date(timeIntervalSince1970: 0)))
    }

    /// The ArchCopy: the server's version as the device knew it.
    var version: ServerVersion {
        ServerVersion(
            record: SyncRecord(
                collection: FolderSync.collection, id: RecordID(path), fields: serverFields,
                version: FolderSync.version(modified ?? Date(timeIntervalSince1970: 0))),
            token: etag.map(SyncValue.string))
    }

    func sameLocal(_ item: LocalItem) -> Bool { item.modifiedNanoseconds == localModified && item.size == localSize }

    /// Whether a listing's `item` without its ETag is still the version cached: the same modification time
    /// and size, and the cached description was given in a later second than the modification (the
    /// server's times have whole seconds, so a write after that description shows a later time). Trusts
    /// that the server sets an item's modification time to when it was written (docs/file-sync.md).
    func stillDescribes(_ item: WebDAVItem) -> Bool {
        guard !isDirectory, !item.isDirectory, etag != nil, let modified, let seen, let size else { return false }
        return item.modified == modified && item.size == size
            && seen.timeIntervalSince1970.rounded(.down) > modified.timeIntervalSince1970.rounded(.down)
    }
}

/// The cache of what the server held, in the device's store.
struct Cache {
    let tx: any StoreTransaction

    init(_ tx: any StoreTransaction) { self.tx = tx }

    func item(_ path: String) async throws -> CachedItem? {
        guard let stored = try await tx.record(RecordKey(collection: FolderSync.cacheCollection, id: RecordID(path))) else {
            return nil
        }
        return CachedItem(stored.record)
    }

    func all() async throws -> [String: CachedItem] {
        var items: [String: CachedItem] = [:]
        for try await stored in tx.allRecords(in: FolderSync.cacheCollection) {
            if let item = CachedItem(stored.record) { items[item.path] = item }
        }
        return items
    }

    func put(_ item: CachedItem) async throws { try await tx.put(item.record) }

    func remove(_ path: String) async throws {
        let key = RecordKey(collection: FolderSync.cacheCollection, id: RecordID(path))
        if try await tx.record(key) != nil { try await tx.purge(key) }
    }

    /// Removes `path` and everything cached under it.
    func removeTree(_ path: String) async throws {
        for (cached, _) in try await all() where FolderSync.isInside(cached, path) { try await remove(cached) }
    }
}

extension ServerVersion {
    /// The ETag the version names.
    var etag: String? { if case .string(let etag)? = token { etag } else { nil } }
}
