import Foundation
import SyncCore

/// One sync's work: the journal's entries, then the server's changes.
struct SyncRun {
    let sync: FolderSync
    var report = FolderSyncReport()
    var files = 0

    init(sync: FolderSync) { self.sync = sync }

    var client: WebDAVClient { sync.client }
    var local: LocalFolder { sync.local }

    func transaction<T: Sendable>(_ body: @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
        try await sync.store.transaction(for: sync.account, body)
    }

    // MARK: The journal

    /// Carries out every entry that is ready or answered: folders first (parents before children),
    /// then moves, uploads (those ready to send ``FolderSync/transfers`` at once, ``uploadReady()``),
    /// and deletes (children before parents).
    mutating func processJournal() async throws {
        let entries = try await transaction { tx in try await tx.journal.entries(in: [FolderSync.collection]) }
        var uploadedReady = false
        func rank(_ entry: JournalEntry) -> (Int, Int, Int64) {
            let depth = entry.key.id.rawValue.split(separator: "/").count
            let isDirectory = entry.local.fields["directory"] == .bool(true)
            switch entry.action {
            case .add where isDirectory: return (0, depth, entry.sequence)
            case .move: return (1, depth, entry.sequence)
            case .add, .modify: return (2, depth, entry.sequence)
            case .delete: return (3, -depth, entry.sequence)
            }
        }
        for entry in entries.sorted(by: { rank($0) < rank($1) }) {
            if rank(entry).0 >= 2 && !uploadedReady {
                try await uploadReady()
                uploadedReady = true
            }
            // A file ready to send went up with the others (or is judged after them); one that waits
            // for an answer waits.
            if rank(entry).0 == 2 && entry.answer == nil { continue }
            // Re-read: an earlier step may have changed or removed it.
            let path = entry.key.id.rawValue
            let (found, waiting) = try await transaction { tx in
                // An item inside a folder whose creation is still pending waits for it.
                var ancestor = WebDAVPath.parent(of: path)
                var waiting = false
                while !ancestor.isEmpty && !waiting {
                    if let pending = try await tx.journal.entry(for: FolderSync.key(ancestor)), pending.action == .add {
                        waiting = true
                    }
                    ancestor = WebDAVPath.parent(of: ancestor)
                }
                return (try await tx.journal.entry(for: entry.key), waiting)
            }
            guard let current = found, !waiting, current.sequence == entry.sequence,
                current.remote == nil || current.answer != nil
            else { continue }
            do {
                switch current.action {
                case .add where current.local.fields["directory"] == .bool(true): try await makeFolder(current)
                case .add, .modify: try await upload(current)
                case .delete: try await delete(current)
                case .move: try await move(current)
                }
            } catch let error as WebDAVError where !error.stopsTheSync {
                try await fail(current, error)
            }
        }
        if !uploadedReady { try await uploadReady() }
    }

    /// A failure no row handles more precisely: inform; drop the entry when the server refused it for good.
    mutating func fail(_ entry: JournalEntry, _ error: WebDAVError) async throws {
        let path = entry.key.id.rawValue
        let keep = error.failureClass != .refused
        report.notices.append(FileNotice(path: path, message: error.description, kept: keep))
        if !keep { try await transaction { tx in try await tx.journal.remove(entry.key) } }
    }

    /// Opens a question about the structure of the folder — a move, a folder's creation — on `entry`
    /// (or returns the policy's answer, ``FolderSync/ConflictPolicy/answer(to:)``); the sync carries its
    /// answer out itself, since it renames or moves items rather than choosing a version.
    mutating func ask(_ entry: JournalEntry, _ question: FileQuestion, remote: SyncRecord? = nil) async throws -> ConflictAnswer? {
        if let answer = sync.policy.answer(to: question.kind) { return answer }
        let version = serverVersion(of: entry, question, remote: remote)
        try await transaction { tx in try await tx.journal.openConflict(entry.key, remote: version) }
        return nil
    }

    /// Hands the server's version of a file that met the pending `entry` to the journal, which opens
    /// `question` on it, lets the policy decide, and carries the decision out through the file writer
    /// (``SyncJournal/take(_:pending:policy:writer:)``).
    /// - Returns: the answer carried out, or `nil` when the question waits for the user.
    mutating func judge(
        _ entry: JournalEntry, _ question: FileQuestion, server: WebDAVItem?, writer: FileConflictWriter
    ) async throws -> ConflictAnswer? {
        let incoming = serverVersion(of: entry, question, remote: server.map(serverRecord))
        let policy = sync.policy
        let outcome = try await transaction { tx in
            try await tx.journal.take(incoming, pending: entry, policy: policy, writer: writer)
        }
        guard case .decided(let answer, carriedOut: true) = outcome else { return nil }
        if answer == .keepBoth { report.conflictCopies.append(writer.copyPath) }
        return answer
    }

    /// Carries out the user's answer to the open conflict of `entry` through the file writer
    /// (``SyncJournal/carryOut(_:of:writer:)``).
    /// - Returns: the answer, or `nil` when nothing was carried out.
    mutating func carryOut(
        _ answer: ConflictAnswer, of entry: JournalEntry, writer: FileConflictWriter
    ) async throws -> ConflictAnswer? {
        guard try await transaction({ tx in try await tx.journal.carryOut(answer, of: entry, writer: writer) }) else {
            return nil
        }
        if answer == .keepBoth && !entry.local.isDeleted { report.conflictCopies.append(writer.copyPath) }
        return answer
    }

    /// The writer of the conflicts of the file at `path`.
    func writer(for path: String) -> FileConflictWriter {
        FileConflictWriter(local: local, clock: sync.clock, copyPath: conflictName(path))
    }

    /// The server's version a question is opened with: the server's item (or, when it has none, the
    /// time it is asked about) and the question.
    func serverVersion(of entry: JournalEntry, _ question: FileQuestion, remote: SyncRecord?) -> ServerVersion {
        var record = remote ?? SyncRecord(collection: FolderSync.collection, id: entry.key.id, version: FolderSync.version(question.serverTime ?? sync.clock.now()))
        record.fields.merge(question.fields) { _, new in new }
        return ServerVersion(record: record, token: record.fields["etag"])
    }

    // MARK: Upload

    mutating func upload(_ entry: JournalEntry) async throws {
        let path = entry.key.id.rawValue
        guard let item = local.item(path), !item.isDirectory else {
            // Gone since the scan: the next scan records what happened.
            try await transaction { tx in try await tx.journal.remove(entry.key) }
            return
        }
        let server = try await client.item(at: path)
        let writer = writer(for: path)
        var answer: ConflictAnswer?
        if let given = entry.answer {
            answer = try await carryOut(given, of: entry, writer: writer)
            if answer == nil { return }
        } else if let server, !server.isDirectory, entry.archCopy != nil, server.etag == entry.archCopy?.etag {
            // The server still holds the ArchCopy: the change goes up.
        } else if let server, !server.isDirectory, server.size == item.size, try await sameContent(path, server) {
            // The server already holds what the device holds (a cut answer, or the same edit on both sides).
            try await settle(entry, path: path, local: item)
            return
        } else if let server {
            let kind: FileQuestion.Kind = entry.archCopy == nil || server.isDirectory ? .existsOnServer : .changedOnBoth
            answer = try await judge(entry, .init(kind: kind, path: path, localTime: item.modified, serverTime: server.modified, localSize: item.size, serverSize: server.size, choices: Self.bothChoices), server: server, writer: writer)
            if answer == nil { return }
        } else if entry.archCopy != nil {
            answer = try await judge(entry, .init(kind: .deletedOnServerChangedLocally, path: path, localTime: item.modified, serverTime: nil, localSize: item.size, choices: [
                "mine": "upload the local copy again", "theirs": "delete the local copy too",
            ]), server: nil, writer: writer)
            if answer == nil { return }
        }
        try await upload(entry.key, item, answer: answer, server: server, copy: writer.copyPath)
    }

    /// The transfers after the judgement: *theirs* downloads the server's version (or removes the local
    /// copy), *both* uploads the conflict copy and downloads the server's version, *mine* (and no
    /// conflict) uploads the local copy over what the server holds.
    mutating func upload(
        _ key: RecordKey, _ item: LocalItem, answer: ConflictAnswer?, server: WebDAVItem?, copy: String
    ) async throws {
        let path = key.id.rawValue
        switch answer {
        case .takeTheirs?:
            try await takeServerVersion(path, server)
            return
        case .keepBoth?:
            if let copyEntry = try await transaction({ tx in try await tx.journal.entry(for: FolderSync.key(copy)) }) {
                try await upload(copyEntry)
            }
            try await takeServerVersion(path, server)
            return
        case .keepMine?, .merged?, nil:
            break
        }
        guard let entry = try await transaction({ tx in try await tx.journal.entry(for: key) }) else { return }
        if answer != nil && server == nil { try await makeParents(path) }
        let precondition: WebDAVClient.Precondition = server?.etag.map { .etag($0) } ?? .absent
        let writer = writer(for: path)
        do {
            try await client.upload(from: local.absolute(path), to: path, precondition: precondition)
        } catch WebDAVError.Code.parentMissing {
            let answer = try await judge(entry, .init(kind: .folderMissing, path: path, localTime: item.modified, serverTime: nil, localSize: item.size, choices: [
                "mine": "create the folder \(WebDAVPath.parent(of: path)) again and upload", "theirs": "delete the local copy",
            ]), server: nil, writer: writer)
            if answer != nil { try await upload(key, item, answer: answer, server: nil, copy: writer.copyPath) }
            return
        } catch let error as WebDAVError where error.code == .notAllowed {
            // Can't be uploaded: inform, keep the entry.
            report.notices.append(FileNotice(path: path, message: error.description, kept: true))
            return
        } catch WebDAVError.Code.changedOnServer {
            // Changed between the look and the upload: judged again, with fresh facts.
            let fresh = try await client.item(at: path)
            let answer = try await judge(entry, .init(kind: .changedOnBoth, path: path, localTime: item.modified, serverTime: fresh?.modified, localSize: item.size, serverSize: fresh?.size, choices: Self.bothChoices), server: fresh, writer: writer)
            if answer != nil && answer != .keepMine { try await upload(key, item, answer: answer, server: fresh, copy: writer.copyPath) }
            return
        }
        report.uploaded.append(path)
        moved(item.size, path)
        try await settle(entry, path: path, local: item)
    }

    /// Whether the server's file at `path` holds the same bytes as the local copy.
    func sameContent(_ path: String, _ server: WebDAVItem) async throws -> Bool {
        let part = local.partFile(for: path)
        defer { unlink(part) }
        do {
            try await client.download(path, to: part)
        } catch WebDAVError.Code.notFound {
            return false
        }
        guard let mine = FileHandle(forReadingAtPath: local.absolute(path)), let theirs = FileHandle(forReadingAtPath: part) else {
            return false
        }
        defer {
            try? mine.close()
            try? theirs.close()
        }
        while true {
            let a = try mine.read(upToCount: 1 << 16) ?? Data()
            let b = try theirs.read(upToCount: 1 << 16) ?? Data()
            if a != b { return false }
            if a.isEmpty { return true }
        }
    }

    /// The server took the entry's change: cache what it holds now, acknowledge the entry.
    func settle(_ entry: JournalEntry, path: String, local item: LocalItem?) async throws {
        let server = try await client.item(at: path)
        try await transaction { tx in
            if let server {
                let cached = CachedItem(server, local: item)
                try await Cache(tx).put(cached)
                try await tx.journal.acknowledge(entry.key, sequence: entry.sequence, holding: cached.version)
            } else {
                try await tx.journal.remove(entry.key)
            }
        }
    }

    /// Makes the local copy what the server holds: downloaded, or removed when the server has none.
    mutating func takeServerVersion(_ path: String, _ server: WebDAVItem?) async throws {
        guard let server else {
            local.remove(path)
            try await transaction { tx in try await Cache(tx).removeTree(path) }
            return
        }
        if server.isDirectory {
            try local.makeDirectory(path)
            let item = local.item(path)
            try await transaction { tx in try await Cache(tx).put(CachedItem(server, local: item)) }
        } else {
            try await download([server])
        }
    }

    func conflictName(_ path: String) -> String {
        let parent = WebDAVPath.parent(of: path)
        let name = WebDAVPath.name(of: path)
        var base = name
        var ext = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            base = String(name[..<dot])
            ext = String(name[dot...])
        }
        let now = Int64(sync.clock.now().timeIntervalSince1970.rounded(.down))
        let days = now >= 0 ? now / 86400 : -((86399 - now) / 86400)
        let date = CivilCalendar.date(fromDays: days)
        let seconds = Int(now - days * 86400)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let stamp = "\(date.year)-\(two(Int(date.month)))-\(two(Int(date.day))) \(two(seconds / 3600))\(two(seconds % 3600 / 60))\(two(seconds % 60))"
        var candidate = WebDAVPath.join(parent, "\(base) (conflict \(sync.device) \(stamp))\(ext)")
        var counter = 2
        while local.item(candidate) != nil {
            candidate = WebDAVPath.join(parent, "\(base) (conflict \(sync.device) \(stamp) \(counter))\(ext)")
            counter += 1
        }
        return candidate
    }

    func makeParents(_ path: String) async throws {
        var prefix = ""
        for segment in WebDAVPath.parent(of: path).split(separator: "/") {
            prefix = WebDAVPath.join(prefix, String(segment))
            if try await client.item(at: prefix) == nil {
                do { try await client.makeCollection(prefix) } catch WebDAVError.Code.notAllowed {}
            }
        }
    }

    static let bothChoices = [
        "mine": "overwrite the server's version with the local copy",
        "theirs": "replace the local copy with the server's version",
        "both": "keep the local copy as a conflict copy and download the server's version",
    ]

    func serverRecord(_ server: WebDAVItem) -> SyncRecord {
        var fields: [String: SyncValue] = ["directory": .bool(server.isDirectory)]
        if let etag = server.etag { fields["etag"] = .string(etag) }
        if let size = server.size { fields["size"] = .integer(size) }
        if let id = server.fileID { fields["fileid"] = .string(id) }
        return SyncRecord(collection: FolderSync.collection, id: RecordID(server.path), fields: fields, version: FolderSync.version(server.modified ?? sync.clock.now()))
    }

    // MARK: Delete

    mutating func delete(_ entry: JournalEntry) async throws {
        let path = entry.key.id.rawValue
        guard let server = try await client.item(at: path) else {
            // Removed from the server already: nothing to do there; no local copy is left.
            local.remove(path)
            try await transaction { tx in
                try await Cache(tx).removeTree(path)
                try await tx.journal.remove(entry.key)
            }
            return
        }
        var answer: ConflictAnswer?
        let writer = writer(for: path)
        if let given = entry.answer {
            answer = try await carryOut(given, of: entry, writer: writer)
            if answer == nil { return }
        } else if server.isDirectory ? try await folderChanged(path) : server.etag != entry.archCopy?.etag {
            answer = try await judge(entry, .init(kind: .deleteChangedOnServer, path: path, localTime: entry.recordedAt, serverTime: server.modified, serverSize: server.size, choices: [
                "mine": "delete it on the server too", "theirs": "keep the server's version and download it again",
            ]), server: server, writer: writer)
            if answer == nil { return }
        }
        // Theirs (or both, which keeps no copy of a deletion): the writer forgot the cache, and the
        // mirror pass downloads the server's version again.
        if answer == .takeTheirs || answer == .keepBoth { return }
        do {
            try await client.delete(path, precondition: server.isDirectory ? .none : server.etag.map { .etag($0) } ?? .none)
        } catch let error as WebDAVError where error.code == .notAllowed || error.code == .notFound {
            // Can't be deleted on the server: inform, drop the entry; the next listing brings it back.
            report.notices.append(FileNotice(path: path, message: "the server would not delete it: " + error.description, kept: false))
            try await transaction { tx in
                try await Cache(tx).removeTree(path)
                try await tx.journal.remove(entry.key)
            }
            return
        }
        report.deletedOnServer.append(path)
        try await transaction { tx in
            try await Cache(tx).removeTree(path)
            try await tx.journal.remove(entry.key)
        }
    }

    /// Whether anything under the folder `path` on the server differs from the cache.
    func folderChanged(_ path: String) async throws -> Bool {
        let server = try await listTree(path)
        let cached = try await transaction { tx in try await Cache(tx).all() }
        for item in server where item.path != path {
            guard let known = cached[item.path], known.isDirectory == item.isDirectory else { return true }
            if !item.isDirectory && known.etag != item.etag { return true }
        }
        return false
    }

    // MARK: Move

    mutating func move(_ entry: JournalEntry) async throws {
        let path = entry.key.id.rawValue
        guard case .string(let source)? = entry.local.fields["from"] else {
            try await transaction { tx in try await tx.journal.remove(entry.key) }
            return
        }
        let item = local.item(path)
        guard let server = try await client.item(at: source) else {
            // Removed from the server: upload any local copy at the new place.
            try await transaction { tx in
                try await Cache(tx).removeTree(source)
                try await tx.journal.remove(entry.key)
                if let item {
                    try await tx.journal.recordLocalChange(.add, local: FolderSync.localRecord(path, item, from: nil, at: entry.recordedAt), at: entry.recordedAt, basedOn: nil)
                }
            }
            guard item != nil else { return }
            if item?.isDirectory == true {
                try await transaction { tx in try await tx.journal.remove(entry.key) }
                try await scanNewTree(path)
                return
            }
            if let added = try await transaction({ tx in try await tx.journal.entry(for: entry.key) }) { try await upload(added) }
            return
        }
        var answer = entry.answer
        if answer == nil && !server.isDirectory && server.etag != entry.archCopy?.etag {
            if let modified = server.modified, entry.recordedAt > modified {
                answer = .keepMine
            } else {
                answer = try await ask(entry, .init(kind: .moveChangedOnServer, path: path, localTime: entry.recordedAt, serverTime: server.modified, serverSize: server.size, choices: [
                    "mine": "move the server's version to \(path)", "theirs": "move the local copy back to \(source)",
                ]), remote: serverRecord(server))
                if answer == nil { return }
            }
        }
        if answer == .takeTheirs {
            try? local.move(path, to: source)
            try await transaction { tx in try await tx.journal.remove(entry.key) }
            return
        }
        do {
            try await makeParents(path)
            try await client.move(source, to: path, precondition: server.isDirectory || answer != nil ? .none : server.etag.map { .etag($0) } ?? .none)
        } catch let error as WebDAVError where error.code == .changedOnServer {
            guard try await client.item(at: path) != nil else { throw error }
            // Something is already at the destination: the move becomes an upload there (which asks,
            // as an upload of an item the device never saw does) and a delete of the source.
            try await transaction { tx in
                try await tx.journal.remove(entry.key)
                try await tx.journal.recordLocalChange(
                    .add, local: FolderSync.localRecord(path, item, from: nil, at: entry.recordedAt), at: entry.recordedAt, basedOn: nil)
                let cached = try await Cache(tx).item(source)
                try await tx.journal.recordLocalChange(
                    .delete, local: FolderSync.localRecord(source, nil, from: nil, at: entry.recordedAt).tombstone(version: FolderSync.version(entry.recordedAt)),
                    at: entry.recordedAt, basedOn: cached?.version)
            }
            return
        } catch let error as WebDAVError where error.code == .notAllowed {
            // Can't be moved on the server: inform, drop the entry, put the local copy back.
            report.notices.append(FileNotice(path: path, message: "the server would not move it from \(source): " + error.description, kept: false))
            try? local.move(path, to: source)
            try await transaction { tx in try await tx.journal.remove(entry.key) }
            return
        }
        report.moved.append("\(source) → \(path)")
        // The cache follows the move: the items keep their local stamps.
        try await transaction { tx in
            let cache = Cache(tx)
            for (cachedPath, cached) in try await cache.all() where FolderSync.isInside(cachedPath, source) {
                try await cache.remove(cachedPath)
                var moved = cached
                moved.path = path + cachedPath.dropFirst(source.count)
                try await cache.put(moved)
            }
            try await tx.journal.remove(entry.key)
        }
        // When the server's item changed since the ArchCopy, the cache keeps the old ETag: the listing
        // that follows sees the change and downloads it over the unmodified local copy.
        if server.etag == entry.archCopy?.etag, let fresh = try await client.item(at: path) {
            try await transaction { tx in
                let cache = Cache(tx)
                if var cached = try await cache.item(path) {
                    cached.etag = fresh.etag
                    cached.modified = fresh.modified
                    cached.size = fresh.size
                    cached.seen = fresh.seen
                    try await cache.put(cached)
                }
            }
        }
    }

    /// Records every item under the local folder `path` as new (a moved folder the server lost).
    func scanNewTree(_ path: String) async throws {
        try await transaction { tx in
            let cache = Cache(tx)
            try await cache.removeTree(path)
        }
        try await sync.scan()
    }

    // MARK: Create directory

    mutating func makeFolder(_ entry: JournalEntry) async throws {
        let path = entry.key.id.rawValue
        guard let item = local.item(path), item.isDirectory else {
            try await transaction { tx in try await tx.journal.remove(entry.key) }
            return
        }
        let entries = try await transaction { tx in try await tx.journal.entries(in: [FolderSync.collection]) }
        let dependents = entries.filter { $0.key.id.rawValue.hasPrefix(path + "/") }
        switch entry.answer {
        case .keepMine?:
            if try await client.item(at: path) == nil { try await client.makeCollection(path) }
            try await adoptFolder(entry, path)
            return
        case .keepBoth?:
            try await renameFolder(entry, path, to: freeName(path))
            return
        case .merged(let fields)?:
            if case .string(let name)? = fields["name"], !name.isEmpty, !name.contains("/") {
                try await renameFolder(entry, path, to: WebDAVPath.join(WebDAVPath.parent(of: path), name))
            } else {
                try await renameFolder(entry, path, to: freeName(path))
            }
            return
        case .takeTheirs?:
            if dependents.isEmpty {
                try? FileManager.default.removeItem(atPath: local.absolute(path))
                try await transaction { tx in try await tx.journal.remove(entry.key) }
            } else {
                report.notices.append(FileNotice(path: path, message: "the folder creation cannot be cancelled: items inside wait for it", kept: true))
            }
            return
        case nil:
            break
        }
        if let server = try await client.item(at: path) {
            if server.isDirectory {
                if dependents.isEmpty {
                    try await adoptFolder(entry, path)
                } else if try await ask(entry, .init(kind: .folderExists, path: path, localTime: entry.recordedAt, serverTime: server.modified, choices: [
                    "mine": "add the items to the folder on the server", "both": "create the folder under another name",
                    "name=NEW": "create the folder as NEW",
                ])) == .keepMine {
                    try await adoptFolder(entry, path)
                }
            } else {
                if try await ask(entry, .init(kind: .fileExistsForFolder, path: path, localTime: entry.recordedAt, serverTime: server.modified, serverSize: server.size, choices: [
                    "name=NEW": "create the folder as NEW", "both": "create the folder under a free name",
                ]), remote: serverRecord(server)) != nil {
                    try await renameFolder(entry, path, to: freeName(path))
                }
            }
            return
        }
        do {
            try await client.makeCollection(path)
        } catch let error as WebDAVError where error.code == .notAllowed || error.code == .parentMissing {
            var choices = ["name=NEW": "create the folder as NEW", "mine": "try again"]
            if dependents.isEmpty { choices["theirs"] = "cancel the folder creation" }
            if try await ask(entry, .init(kind: .folderNotCreated, path: path, localTime: entry.recordedAt, serverTime: nil, choices: choices)) != nil {
                if error.code == .parentMissing { try await makeParents(path) }
                try await client.makeCollection(path)
            } else {
                return
            }
        }
        report.createdFolders.append(path)
        try await adoptFolder(entry, path)
    }

    func adoptFolder(_ entry: JournalEntry, _ path: String) async throws {
        try await settle(entry, path: path, local: local.item(path))
    }

    func freeName(_ path: String) async throws -> String {
        var counter = 2
        while true {
            let candidate = "\(path) (\(counter))"
            if local.item(candidate) == nil, try await client.item(at: candidate) == nil { return candidate }
            counter += 1
        }
    }

    /// Creates the folder under `newPath` instead: the local folder moves, and the pending entries inside follow it.
    func renameFolder(_ entry: JournalEntry, _ path: String, to newPath: String) async throws {
        try local.move(path, to: newPath)
        try await transaction { tx in
            for pending in try await tx.journal.entries(in: [FolderSync.collection]) where FolderSync.isInside(pending.key.id.rawValue, path) {
                try await tx.journal.remove(pending.key)
                let movedPath = newPath + pending.key.id.rawValue.dropFirst(path.count)
                var record = pending.local
                record.id = RecordID(movedPath)
                try await tx.journal.recordLocalChange(pending.action == .delete ? .delete : .add, local: record, at: pending.recordedAt, basedOn: nil)
            }
        }
    }

    mutating func moved(_ bytes: Int64, _ path: String) {
        files += 1
        report.bytes += bytes
        sync.progress?(FileSyncProgress(files: files, bytes: report.bytes, current: path))
    }
}
