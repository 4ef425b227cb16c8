import ArgumentParser
import FileSync
import Foundation
import SyncCore
import Synchronization

/// `anchorage files`: a local folder kept in sync with a folder on a WebDAV server.
struct Files: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Keep a local folder in sync with a folder on a WebDAV server.",
        subcommands: [SyncFolder.self]
    )

    /// The local account file sync keeps its cache and journal under, in its store.
    static let account: AccountID = "files"

    struct SyncFolder: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Sync LOCAL_DIR with a WebDAV folder: anchorage files sync LOCAL_DIR --server URL --user NAME.",
            discussion: """
                One sync records the folder's changes in the device's journal, carries them
                out on the server (with If-Match / If-None-Match preconditions on ETags),
                then mirrors the server's changes into the folder, leaving items with
                pending changes alone. The password is read from ANCHORAGE_PASSWORD.

                Questions (a file changed on both sides, a folder that already exists, …)
                wait in the store: `anchorage conflicts list --files` shows them with the
                dates and sizes to decide by, `anchorage conflicts resolve files/PATH
                --keep mine|theirs|both --files` (or `--name NEW` for a folder) answers, and
                the next sync carries the answer out. --priority both never asks: it keeps
                both copies (NAME (conflict DEVICE DATE TIME).EXT) and restores what one side
                deleted and the other changed.

                Keep one store per synced folder. On a terminal a progress bar shows the bytes
                and files moved; otherwise each file is one line.

                Exit status: 0 done (questions may wait); 64 a bad argument; 69 the server
                could not be listed; 74 the store cannot be opened.
                """)

        @Argument(help: "The local folder.")
        var localDir: String

        @Option(help: "The WebDAV folder's URL, e.g. https://files.example.com/remote.php/dav/files/ada/.")
        var server: String

        @Option(help: "The account on the server (its password in ANCHORAGE_PASSWORD).")
        var user: String?

        @Option(help: "The device's local store (journal and cache): sqlite:PATH or memory.")
        var store = StoreOption(argument: "sqlite:anchorage-files.sqlite")!

        @Option(help: "ask: questions wait for an answer; both: keep both copies, never ask.")
        var priority: FolderSync.ConflictPolicy = .askUser

        @Option(help: "The device's name, in the names of conflict copies.")
        var device: String = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "device"

        @Flag(help: "Sync again and again, every --interval seconds, until interrupted.")
        var watch = false

        @Option(help: "Seconds between syncs with --watch.")
        var interval: Int = 30

        @Option(
            help: """
                Seconds one request may take, a large file's transfer included. A sync stops at the first request \
                that gets no answer (a refused connection after a few quick retries, about 3 seconds; a server that does not take the \
                connection after about 30 seconds: 20 seconds of retries and a 10-second connect), and what \
                waits stays for the next sync.
                """)
        var timeout: Int = 3600

        @Option(help: "How many uploads, downloads and listings a sync keeps in flight at once.")
        var transfers: Int = 8

        @Flag(
            help: """
                Ask the server for every file's ETag on every sync, instead of taking a file listed with the \
                modification time and size seen before as unchanged (for servers whose clients can set \
                modification times).
                """)
        var compareEtags = false

        func validate() throws {
            guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--server must be an http:// or https:// URL")
            }
            guard interval > 0 else { throw ValidationError("--interval must be at least 1") }
            guard timeout > 0 else { throw ValidationError("--timeout must be at least 1") }
            guard (1...64).contains(transfers) else { throw ValidationError("--transfers must be between 1 and 64") }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: localDir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("\(localDir) is not a folder")
            }
        }

        func run() async throws {
            var base = server
            if !base.hasSuffix("/") { base += "/" }
            let password = ProcessInfo.processInfo.environment["ANCHORAGE_PASSWORD"] ?? ""
            if user != nil && password.isEmpty {
                throw failure("set ANCHORAGE_PASSWORD to the password of \(user!)", code: 64)
            }
            let transport = WebDAVHTTPTransport(
                baseURL: URL(string: base)!, username: user, password: password, timeout: .seconds(timeout))
            let folder = URL(fileURLWithPath: localDir).standardizedFileURL.path
            let bar = ProgressLine(terminal: isatty(STDOUT_FILENO) == 1)
            try await store.withStore { store in
                let sync = FolderSync(
                    folder: folder, client: WebDAVClient(transport: transport), store: store, account: Files.account,
                    device: device, policy: priority, transfers: transfers, comparesETags: compareEtags,
                    progress: { bar.show($0) })
                repeat {
                    let report: FolderSyncReport
                    do {
                        report = try await sync.sync()
                    } catch let error as WebDAVError {
                        bar.finish()
                        let line = Self.describe(error, user: user)
                        if !watch { throw failure(line, code: 69) }
                        print("sync failed, trying again in \(interval) s: \(line)")
                        try await Task.sleep(for: .seconds(interval))
                        continue
                    }
                    bar.finish()
                    for line in Self.summary(report) { print(line) }
                    if watch { try await Task.sleep(for: .seconds(interval)) }
                } while watch
            }
        }

        /// The one line for a sync that stopped: why the server could not be reached, whose credentials it
        /// refused, or what it answered.
        static func describe(_ error: WebDAVError, user: String?) -> String {
            switch error.code {
            case .noAnswer where !error.detail.isEmpty, .tlsFailed where !error.detail.isEmpty:
                return error.detail
            case .unauthorized:
                return user.map { "the server refused user \($0)'s password" }
                    ?? "the server asks for credentials: pass --user and set ANCHORAGE_PASSWORD"
            default:
                return "the server's folder cannot be synced: \(error)"
            }
        }

        /// The report as lines: what moved, what the user is told, and the questions that wait.
        static func summary(_ report: FolderSyncReport) -> [String] {
            var lines = [
                "uploaded \(report.uploaded.count), downloaded \(report.downloaded.count), deleted on the server \(report.deletedOnServer.count), "
                    + "deleted here \(report.deletedLocally.count), moved \(report.moved.count), folders made \(report.createdFolders.count), "
                    + "\(report.bytes) bytes"
            ]
            lines += report.conflictCopies.map { "kept both: \($0)" }
            lines += report.notices.map { "note: \($0)" }
            lines += report.questions.map { "question \($0.id): \($0)" }
            if !report.questions.isEmpty {
                lines.append("\(report.questions.count) question\(report.questions.count == 1 ? "" : "s") wait\(report.questions.count == 1 ? "s" : "") for an answer: anchorage conflicts list --files")
            }
            return lines
        }
    }
}

extension FolderSync.ConflictPolicy: ExpressibleByArgument {}

/// Progress of a files sync: a bar redrawn in place on a terminal, one line per file otherwise.
final class ProgressLine: Sendable {
    let terminal: Bool
    private let drawn = Mutex(false)

    init(terminal: Bool) { self.terminal = terminal }

    func show(_ progress: FileSyncProgress) {
        if terminal {
            let width = 20
            let filled = min(width, progress.files % (width + 1))
            let bar = ImportProgress.bar(filled: filled, width: width)
            let name = progress.current.count > 40 ? "…" + progress.current.suffix(39) : progress.current
            FileHandle.standardOutput.write(Data("\r\u{1B}[K[\(bar)] \(progress.files) files, \(ByteCount.text(progress.bytes)) \(name)".utf8))
            drawn.withLock { $0 = true }
        } else {
            print("\(progress.files) files, \(progress.bytes) bytes: \(progress.current)")
        }
    }

    /// Ends the bar's line.
    func finish() {
        if drawn.withLock({ let was = $0; $0 = false; return was }) { FileHandle.standardOutput.write(Data("\n".utf8)) }
    }
}

/// Byte counts for people.
enum ByteCount {
    static func text(_ bytes: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
