import FileSync
import Foundation
import SyncCore
import SyncTesting
import TestSupport

/// The Apache httpd with mod_dav the tests use: the one named by the environment of
/// `scripts/with-apache.sh`, or else one this test process starts with that script on first use
/// and stops when it exits. Each test works in a folder of its own on it.
enum TestApache {
    struct Server: Sendable {
        var url: URL
        var root: String
        var user: String
        var password: String
    }

    /// The server, or the reason none could be started.
    static var server: Result<Server, TestApacheError> {
        get async { await started.value }
    }

    /// The server, found or started on first use: callers that come while it starts wait for it
    /// without holding a thread.
    private static let started = MadeOnce { await findOrStart() }

    nonisolated(unsafe) private static var ownedDirectory: String?

    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/with-apache.sh").path
    }

    private static func findOrStart() async -> Result<Server, TestApacheError> {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["ANCHORAGE_WEBDAV_URL"].flatMap(URL.init(string:)), let root = environment["ANCHORAGE_WEBDAV_ROOT"] {
            return .success(Server(url: url, root: root, user: environment["ANCHORAGE_WEBDAV_USER"] ?? "anchorage",
                                   password: environment["ANCHORAGE_WEBDAV_PASSWORD"] ?? "anchorage"))
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anchorage-apache-\(UUID().uuidString)").path
        let outcome: ChildProcess.Outcome
        do {
            outcome = try await ChildProcess.run(
                "/bin/bash", arguments: [script, "--start", directory, String(ProcessInfo.processInfo.processIdentifier)])
        } catch {
            return .failure(TestApacheError(reason: "could not run \(script): \(error)"))
        }
        guard outcome.status == 0, let line = outcome.outputText.split(whereSeparator: \.isNewline).last, let port = Int(line) else {
            return .failure(TestApacheError(reason: "\(script) --start failed: \(outcome.errorText)"))
        }
        ownedDirectory = directory
        atexit {
            if let directory = TestApache.ownedDirectory {
                _ = try? ChildProcess.runSynchronously("/bin/bash", arguments: [TestApache.script, "--stop", directory])
            }
        }
        return .success(Server(url: URL(string: "http://127.0.0.1:\(port)/dav/")!, root: directory + "/root", user: "anchorage", password: "anchorage"))
    }
}

struct TestApacheError: Error, CustomStringConvertible {
    var reason: String
    var description: String { "Apache with mod_dav is needed: \(reason)" }
}

/// A test's world: a folder of its own on the server, a client that changes it directly (another user),
/// and devices with folders and stores of their own.
final class World: Sendable {
    let server: TestApache.Server
    /// The test's folder on the server, under /dav/.
    let name: String
    /// A client of the test's folder, changing it behind the devices' backs.
    let direct: WebDAVClient
    let temporary: TemporaryFolder

    init() async throws {
        server = try await TestApache.server.get()
        name = "t-" + UUID().uuidString.prefix(8).lowercased()
        let root = WebDAVClient(transport: WebDAVHTTPTransport(baseURL: server.url, username: server.user, password: server.password))
        try await root.makeCollection(name)
        direct = WebDAVClient(transport: WebDAVHTTPTransport(
            baseURL: server.url.appendingPathComponent(name + "/"), username: server.user, password: server.password))
        temporary = try TemporaryFolder("filesync")
    }

    var baseURL: URL { server.url.appendingPathComponent(name + "/") }

    /// The test folder on the server's disk.
    var serverRoot: String { server.root + "/" + name }

    func transport() -> WebDAVHTTPTransport {
        WebDAVHTTPTransport(baseURL: baseURL, username: server.user, password: server.password, timeout: .seconds(60))
    }

    /// A device with its own folder and store.
    func device(
        _ name: String = "phone", policy: FolderSync.ConflictPolicy = .askUser, store: (any SyncStore)? = nil,
        transport: (any WebDAVTransport)? = nil
    ) throws -> FolderSync {
        let folder = temporary.path(name)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return FolderSync(
            folder: folder, client: WebDAVClient(transport: transport ?? self.transport()), store: store ?? MemoryStore(),
            account: "ada", device: name, policy: policy)
    }

    /// Writes `text` to the server at `path` (directly).
    func put(_ path: String, _ text: String) async throws {
        let file = temporary.path("upload-" + UUID().uuidString)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        try await direct.upload(from: file, to: path, precondition: .none)
        try? FileManager.default.removeItem(atPath: file)
    }

    /// The server's content of `path`, or `nil`.
    func get(_ path: String) async throws -> String? {
        guard try await direct.item(at: path) != nil else { return nil }
        let file = temporary.path("download-" + UUID().uuidString)
        try await direct.download(path, to: file)
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try String(contentsOfFile: file, encoding: .utf8)
    }

    /// Puts a file straight into the server's document root (for names the server refuses to write).
    func plant(_ path: String, _ text: String) throws {
        let file = serverRoot + "/" + path
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    }
}

extension FolderSync {
    /// Writes `text` to the local file `path`, making its folder.
    func write(_ path: String, _ text: String) throws {
        let file = folder + "/" + path
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    }

    /// The local content of `path`, or `nil`.
    func read(_ path: String) -> String? { try? String(contentsOfFile: folder + "/" + path, encoding: .utf8) }

    /// Whether something is at `path` locally.
    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: folder + "/" + path) }

    /// Removes the local item at `path`.
    func remove(_ path: String) throws { try FileManager.default.removeItem(atPath: folder + "/" + path) }

    /// Makes the local folder `path`.
    func makeFolder(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: folder + "/" + path, withIntermediateDirectories: true)
    }

    /// The files and folders in the local folder (part files included), sorted.
    func listing() -> [String] {
        (FileManager.default.subpaths(atPath: folder) ?? []).sorted()
    }

    /// Answers the question about `path`.
    func answer(_ path: String, _ answer: ConflictAnswer) async throws {
        try await store.answerConflict(FolderSync.collection.rawValue + "/" + path, with: answer, for: account)
    }

    /// The pending journal entries, by path.
    func pending() async throws -> [String: JournalAction] {
        try await store.transaction(for: account) { tx in
            var result: [String: JournalAction] = [:]
            for entry in try await tx.journal.entries(in: [FolderSync.collection]) { result[entry.key.id.rawValue] = entry.action }
            return result
        }
    }
}
