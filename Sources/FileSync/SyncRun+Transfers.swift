import Foundation
import SyncCore

/// The bulk of a sync's traffic: uploads of ready changes, listings and downloads, up to
/// ``FolderSync/transfers`` at once, each batch settled in one store transaction.
///
/// An upload needs no look-up first: its precondition says what it expects (`If-None-Match: *` for a
/// file the device never had from the server, `If-Match` with the ArchCopy's ETag for one it had), and
/// a 412 or 409 sends the entry down the path that looks and judges (``SyncRun/upload(_:)``). A batch
/// is settled once its transfers are done, so a device killed in the middle finds the entries still
/// pending: the next sync's upload meets its own bytes (412), compares them and settles.
extension SyncRun {
    /// How many transfers are settled in one store transaction at the most.
    static let batchSize = 256

    // MARK: Uploads

    /// What became of one upload.
    enum UploadOutcome: Sendable {
        /// The server took the bytes; the ETag when its answer gave one.
        case uploaded(JournalEntry, LocalItem, etag: String?)
        /// The local file is gone (or is a folder now): the next scan records what happened.
        case gone(JournalEntry)
        /// The precondition failed or the folder is gone: the entry is judged one by one.
        case needsLook(JournalEntry)
        /// The server refused or failed: inform (``SyncRun/fail(_:_:)``).
        case failed(JournalEntry, WebDAVError)
        /// The server cannot be reached or refused the credentials: the sync stops.
        case stopped(any Error)
    }

    /// Uploads every file whose change is ready to send and whose folder exists, `transfers` at once;
    /// what the preconditions turn back is judged one by one afterwards.
    mutating func uploadReady() async throws {
        let entries = try await transaction { tx in try await tx.journal.entries(in: [FolderSync.collection]) }
        let foldersToMake = Set(entries.filter { $0.action == .add && Self.isFolder($0) }.map(\.key.id.rawValue))
        func waitsForFolder(_ path: String) -> Bool {
            var ancestor = WebDAVPath.parent(of: path)
            while !ancestor.isEmpty {
                if foldersToMake.contains(ancestor) { return true }
                ancestor = WebDAVPath.parent(of: ancestor)
            }
            return false
        }
        let ready = entries.filter {
            ($0.action == .add || $0.action == .modify) && !Self.isFolder($0) && $0.remote == nil
                && !waitsForFolder($0.key.id.rawValue)
        }
        var toLook: [JournalEntry] = []
        for start in stride(from: 0, to: ready.count, by: Self.batchSize) {
            let batch = Array(ready[start..<min(start + Self.batchSize, ready.count)])
            let (client, local) = (self.client, self.local)
            let outcomes = await inParallel(batch, limit: sync.transfers, stopsAll: Self.stops) { entry in
                await Self.put(entry, client: client, local: local)
            }
            var uploaded: [(JournalEntry, LocalItem, String?)] = []
            var stop: (any Error)?
            for outcome in outcomes {
                switch outcome {
                case .uploaded(let entry, let item, let etag):
                    uploaded.append((entry, item, etag))
                    report.uploaded.append(entry.key.id.rawValue)
                    moved(item.size, entry.key.id.rawValue)
                case .gone(let entry):
                    try await transaction { tx in try await tx.journal.remove(entry.key) }
                case .needsLook(let entry):
                    toLook.append(entry)
                case .failed(let entry, let error) where error.code == .notAllowed:
                    // Can't be uploaded: inform, keep the entry.
                    report.notices.append(FileNotice(path: entry.key.id.rawValue, message: error.description, kept: true))
                case .failed(let entry, let error):
                    try await fail(entry, error)
                case .stopped(let error):
                    stop = stop ?? error
                }
            }
            try await settle(uploaded)
            if let stop { throw stop }
        }
        for entry in toLook {
            guard let current = try await transaction({ tx in try await tx.journal.entry(for: entry.key) }),
                current.sequence == entry.sequence, current.remote == nil
            else { continue }
            do {
                try await upload(current)
            } catch let error as WebDAVError where !error.stopsTheSync {
                try await fail(current, error)
            }
        }
    }

    /// One upload with the precondition the entry implies, no look-up before it.
    static func put(_ entry: JournalEntry, client: WebDAVClient, local: LocalFolder) async -> UploadOutcome {
        let path = entry.key.id.rawValue
        guard let item = local.item(path), !item.isDirectory else { return .gone(entry) }
        // A version the server named by no ETag cannot be matched: `If-None-Match: *` fails, and the look decides.
        let precondition: WebDAVClient.Precondition = entry.archCopy?.etag.map { .etag($0) } ?? .absent
        do {
            let etag = try await client.upload(from: local.absolute(path), to: path, precondition: precondition)
            return .uploaded(entry, item, etag: etag)
        } catch let error as WebDAVError where error.code == .changedOnServer || error.code == .parentMissing {
            return .needsLook(entry)
        } catch let error as WebDAVError where !error.stopsTheSync {
            return .failed(entry, error)
        } catch {
            return .stopped(error)
        }
    }

    static func stops(_ outcome: UploadOutcome) -> Bool {
        if case .stopped = outcome { true } else { false }
    }

    /// Acknowledges uploaded entries with what the server holds now, in one transaction: the ETag of
    /// the `PUT`'s answer, or (Apache sends none) a listing — of the folder when four or more of its
    /// files went up, else of each file.
    mutating func settle(_ uploaded: [(entry: JournalEntry, item: LocalItem, etag: String?)]) async throws {
        guard !uploaded.isEmpty else { return }
        var held: [String: WebDAVItem] = [:]
        var unknown: [String] = []
        for (entry, item, etag) in uploaded {
            let path = entry.key.id.rawValue
            if let etag {
                held[path] = WebDAVItem(path: path, isDirectory: false, etag: etag, modified: item.modified, size: item.size)
            } else {
                unknown.append(path)
            }
        }
        held.merge(try await lookUp(unknown)) { _, listed in listed }
        let settled = held
        try await transaction { tx in
            for (entry, item, _) in uploaded {
                if let server = settled[entry.key.id.rawValue] {
                    let cached = CachedItem(server, local: item)
                    try await Cache(tx).put(cached)
                    try await tx.journal.acknowledge(entry.key, sequence: entry.sequence, holding: cached.version)
                } else {
                    // Gone again since: the next sync decides with what the server holds then.
                    try await tx.journal.remove(entry.key)
                }
            }
        }
    }

    static func isFolder(_ entry: JournalEntry) -> Bool { entry.local.fields["directory"] == .bool(true) }

    // MARK: Listing

    /// What the server holds at `paths` (files), ETags included: a listing of the folder when four or
    /// more of them share it, else a look at each; paths the server does not hold are left out.
    func lookUp(_ paths: some Sequence<String>) async throws -> [String: WebDAVItem] {
        var byFolder: [String: Set<String>] = [:]
        for path in paths { byFolder[WebDAVPath.parent(of: path), default: []].insert(path) }
        let client = self.client
        let lookUps = byFolder.sorted { $0.key < $1.key }
        let listed = await inParallel(lookUps, limit: sync.transfers, stopsAll: { $0.isFailure }) { lookUp in
            await Listing {
                if lookUp.value.count >= 4 {
                    return try await client.contents(of: lookUp.key).filter { lookUp.value.contains($0.path) }
                }
                var items: [WebDAVItem] = []
                for path in lookUp.value.sorted() { if let item = try await client.item(at: path) { items.append(item) } }
                return items
            }
        }
        var held: [String: WebDAVItem] = [:]
        for listing in listed {
            for item in try listing.items.get() { held[item.path] = item }
        }
        return held
    }

    /// The items of listings, or why they could not be had.
    struct Listing: Sendable {
        var items: Result<[WebDAVItem], any Error>

        init(_ list: () async throws -> [WebDAVItem]) async {
            do { items = .success(try await list()) } catch { items = .failure(error) }
        }

        var isFailure: Bool { if case .failure = items { true } else { false } }
    }

    /// Every item under the server's folder `path`, listed folder by folder (depth 1; servers refuse
    /// depth infinity), the folders of one level `transfers` at once; without ETags when `etags` is `false`.
    func listTree(_ path: String, etags: Bool = true) async throws -> [WebDAVItem] {
        var items: [WebDAVItem] = []
        var level = [path]
        let client = self.client
        while !level.isEmpty {
            let listings = await inParallel(level, limit: sync.transfers, stopsAll: { $0.isFailure }) { folder in
                await Listing { try await client.contents(of: folder, etags: etags) }
            }
            var next: [String] = []
            for (folder, listing) in zip(level, listings) {
                let listed: [WebDAVItem]
                do {
                    listed = try listing.items.get()
                } catch WebDAVError.Code.notFound where folder != path {
                    continue  // removed since its parent was listed
                }
                for item in listed {
                    if item.path == folder {
                        if folder == path { items.append(item) }
                        continue
                    }
                    items.append(item)
                    if item.isDirectory { next.append(item.path) }
                }
            }
            level = next
        }
        return items
    }

    // MARK: The server's changes

    /// Mirrors the server's folder: new and changed items are downloaded, items the server
    /// deleted are removed locally; items with pending entries are left alone.
    ///
    /// The listing asks for no ETags (unless ``FolderSync/comparesETags``): a file listed with the
    /// modification time and size cached is the version cached (``CachedItem/stillDescribes(_:)``); the
    /// ETags of the other known files are looked up (``lookUp(_:)``), and a new file's comes with its
    /// download.
    mutating func fetchRemote() async throws {
        var server = try await listTree("", etags: sync.comparesETags).filter { !$0.path.isEmpty }
        let (cached, entries) = try await transaction { tx in
            (try await Cache(tx).all(), try await tx.journal.entries(in: [FolderSync.collection]))
        }
        var unsure: [String] = []
        for index in server.indices where !server[index].isDirectory && server[index].etag == nil {
            guard let known = cached[server[index].path] else { continue }
            if known.stillDescribes(server[index]) {
                server[index].etag = known.etag
            } else {
                unsure.append(server[index].path)
            }
        }
        if !unsure.isEmpty {
            let held = try await lookUp(unsure)
            let gone = Set(unsure).subtracting(held.keys)
            server = server.compactMap { item in gone.contains(item.path) ? nil : held[item.path] ?? item }
        }
        var busy = Set<String>()
        for entry in entries {
            busy.insert(entry.key.id.rawValue)
            if case .string(let from)? = entry.local.fields["from"] { busy.insert(from) }
        }
        func isBusy(_ path: String) -> Bool {
            busy.contains { FolderSync.isInside(path, $0) || FolderSync.isInside($0, path) }
        }
        let onServer = Set(server.map(\.path))
        var toDownload: [WebDAVItem] = []
        var folders: [CachedItem] = []
        var described: [CachedItem] = []
        for item in server.sorted(by: { $0.path < $1.path }) where !isBusy(item.path) && !Self.isTemporary(item.path) {
            let known = cached[item.path]
            if item.isDirectory {
                if known == nil || local.item(item.path) == nil {
                    try? local.makeDirectory(item.path)
                    folders.append(CachedItem(item, local: local.item(item.path)))
                }
                continue
            }
            let present = local.item(item.path)
            if let known, known.etag == item.etag, let present, known.sameLocal(present) {
                if !known.stillDescribes(item) { described.append(CachedItem(item, local: present)) }  // seen again: next time, no look-up
                continue
            }
            if let known, known.etag == item.etag, present == nil { continue }  // deleted here since the scan: next sync
            if let present, !present.isDirectory, let known, !known.sameLocal(present) {
                // A modified local copy: the next scan records it, and the upload asks.
                continue
            }
            if let present, present.isDirectory { continue }
            if present != nil && known == nil { continue }  // made here since the scan: next sync
            toDownload.append(item)
        }
        let cacheNow = folders + described
        if !cacheNow.isEmpty {
            try await transaction { tx in
                for item in cacheNow { try await Cache(tx).put(item) }
            }
        }
        try await download(toDownload)
        // Items the server no longer has.
        var forgotten: [String] = []
        for (path, known) in cached.sorted(by: { $0.key > $1.key }) where !onServer.contains(path) && !isBusy(path) {
            if let present = local.item(path) {
                if !known.isDirectory && !known.sameLocal(present) { continue }  // changed here: the scan asks
                if known.isDirectory {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: local.absolute(path))) ?? []
                    if !names.isEmpty { continue }
                }
                local.remove(path)
                report.deletedLocally.append(path)
            }
            forgotten.append(path)
        }
        let gone = forgotten
        if !gone.isEmpty {
            try await transaction { tx in
                for path in gone { try await Cache(tx).remove(path) }
            }
        }
    }

    /// Whether `path` names a file in the making: a device's part file, or Apache's upload in progress.
    static func isTemporary(_ path: String) -> Bool {
        let name = WebDAVPath.name(of: path)
        return name.hasSuffix(LocalFolder.partSuffix) || name.hasPrefix(".davfs.tmp")
    }

    // MARK: Downloads

    /// What became of one download.
    enum DownloadOutcome: Sendable {
        /// In its part file, not yet flushed to disk: where, and what to cache once it is in place.
        case downloaded(part: String, CachedItem)
        /// The server failed or the disk is full: inform; the next sync tries again.
        case failed(WebDAVItem, WebDAVError)
        /// The server cannot be reached or refused the credentials: the sync stops.
        case stopped(any Error)

        var stops: Bool { if case .stopped = self { true } else { false } }
    }

    /// Downloads `items`, `transfers` at once, each to a part file next to its place. Each batch's part
    /// files are flushed to disk at once, renamed in, their folders synced once, and the files cached in
    /// one transaction: a file is cached as in place only once its bytes and its name are durable.
    mutating func download(_ items: [WebDAVItem]) async throws {
        for start in stride(from: 0, to: items.count, by: Self.batchSize) {
            let batch = Array(items[start..<min(start + Self.batchSize, items.count)])
            let (client, local) = (self.client, self.local)
            let outcomes = await inParallel(batch, limit: sync.transfers, stopsAll: { $0.stops }) { item in
                await Self.fetch(item, client: client, local: local)
            }
            var parts: [(part: String, cached: CachedItem)] = []
            var stop: (any Error)?
            for outcome in outcomes {
                switch outcome {
                case .downloaded(let part, let cached):
                    parts.append((part, cached))
                case .failed(let item, let error):
                    // Disk full or a server error: inform; the next sync tries again.
                    report.notices.append(FileNotice(path: item.path, message: "download failed: " + error.description, kept: false))
                case .stopped(let error):
                    stop = stop ?? error
                }
            }
            var settled: [CachedItem] = []
            do {
                try await nameUnnamed(&parts)
                try local.flush(parts.map(\.part))
                for (part, cached) in parts {
                    try local.install(part, at: cached.path, syncingFolder: false)
                    var placed = cached
                    if let present = local.item(cached.path) {
                        placed.localModified = present.modifiedNanoseconds
                        placed.localSize = present.size
                        placed.size = placed.size ?? present.size
                    }
                    settled.append(placed)
                    report.downloaded.append(placed.path)
                    moved(placed.localSize, placed.path)
                }
            } catch {
                for (part, _) in parts { unlink(part) }
                stop = stop ?? error
            }
            if !settled.isEmpty {
                // The renames are durable before the cache says the files are in place.
                local.syncFolders(of: settled.map(\.path))
                let inPlace = settled
                try await transaction { tx in
                    for cached in inPlace { try await Cache(tx).put(cached) }
                }
            }
            if let stop { throw stop }
        }
    }

    /// Gives downloaded files whose `GET` answer carried no ETag (and whose listing asked for none) the
    /// ETag a look-up finds, when it describes the same modification time and size as the download's answer.
    /// A file left without one is looked up again by the next sync.
    func nameUnnamed(_ parts: inout [(part: String, cached: CachedItem)]) async throws {
        let unnamed = parts.filter { $0.cached.etag == nil }.map(\.cached.path)
        guard !unnamed.isEmpty else { return }
        let held = try await lookUp(unnamed)
        for index in parts.indices where parts[index].cached.etag == nil {
            let cached = parts[index].cached
            guard let server = held[cached.path], cached.modified != nil, server.modified == cached.modified,
                server.size == cached.size
            else { continue }
            parts[index].cached.etag = server.etag
            parts[index].cached.seen = server.seen
        }
    }

    /// Downloads `item` to a part file (not yet flushed) and the cache entry it makes, or the failure.
    /// The version is the one the `GET`'s answer describes (its ETag, modification time, size and date).
    static func fetch(_ item: WebDAVItem, client: WebDAVClient, local: LocalFolder) async -> DownloadOutcome {
        let part = local.partFile(for: item.path)
        let fetched: WebDAVItem
        do {
            try local.makeDirectory(WebDAVPath.parent(of: item.path))
            fetched = try await client.fetch(item.path, to: part, syncing: false)
        } catch {
            unlink(part)
            if let error = error as? WebDAVError, !error.stopsTheSync { return .failed(item, error) }
            return .stopped(error)
        }
        var version = item
        if let etag = fetched.etag {
            // What came down, described by the answer, rather than what the listing saw before.
            version.etag = etag
            version.modified = fetched.modified ?? item.modified
            version.size = fetched.size ?? item.size
            version.seen = fetched.seen
        } else {
            // No ETag in the answer: the listing's, if it had one (the same version or an older one, so a
            // change is downloaded again rather than missed), else ``nameUnnamed(_:)`` looks for one.
            version.modified = fetched.modified ?? item.modified
            version.size = fetched.size ?? item.size
            version.seen = nil
        }
        return .downloaded(part: part, CachedItem(version, local: nil))
    }
}

/// Runs `body` for each of `items`, at most `limit` at once, and returns the outcomes of those that
/// ran, in the items' order. Once an outcome `stopsAll`, no further item starts; those in flight finish.
func inParallel<Item: Sendable, Outcome: Sendable>(
    _ items: [Item], limit: Int, stopsAll: @escaping @Sendable (Outcome) -> Bool,
    _ body: @escaping @Sendable (Item) async -> Outcome
) async -> [Outcome] {
    var outcomes = [Outcome?](repeating: nil, count: items.count)
    await withTaskGroup(of: (Int, Outcome).self) { group in
        var next = 0
        var stopped = false
        while next < min(limit, items.count) {
            let index = next
            group.addTask { (index, await body(items[index])) }
            next += 1
        }
        while let (index, outcome) = await group.next() {
            outcomes[index] = outcome
            if stopsAll(outcome) { stopped = true }
            if !stopped && next < items.count {
                let index = next
                group.addTask { (index, await body(items[index])) }
                next += 1
            }
        }
    }
    return outcomes.compactMap { $0 }
}
