import FileSync
import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// Each row of the seed's tables of actions and reactions, against Apache mod_dav: the situation is
/// set up on the server and the device, the device syncs, and the reaction (or the question) is checked.
@Suite("FolderSync: the seed's actions and reactions")
struct SeedRowTests {
    /// A device that synced `names` (path → content) from the server.
    func synced(_ world: World, _ files: [String: String], policy: FolderSync.ConflictPolicy = .askUser) async throws -> FolderSync {
        for (path, text) in files.sorted(by: { $0.key < $1.key }) {
            if path.contains("/") {
                var prefix = ""
                for segment in path.split(separator: "/").dropLast() {
                    prefix += (prefix.isEmpty ? "" : "/") + segment
                    if try await world.direct.item(at: prefix) == nil { try await world.direct.makeCollection(prefix) }
                }
            }
            try await world.put(path, text)
        }
        let device = try world.device(policy: policy)
        _ = try await device.sync()
        for (path, text) in files { #expect(device.read(path) == text) }
        return device
    }

    // MARK: Delete (triggered locally by user)

    @Test("Delete, item removed from server: nothing on the server, the local copy is gone")
    func deleteRemovedFromServer() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try await world.direct.delete("a.txt")
        try device.remove("a.txt")
        let report = try await device.sync()
        #expect(report.questions.isEmpty && report.notices.isEmpty && report.deletedOnServer.isEmpty)
        #expect(try await device.pending().isEmpty && !device.exists("a.txt"))
    }

    @Test("Delete, item changed on the server: asks, with the server's date and the action's time")
    func deleteChangedOnServer() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try device.remove("a.txt")
        try await world.put("a.txt", "two")
        let report = try await device.sync()
        let question = try #require(report.questions.first)
        #expect(question.kind == .deleteChangedOnServer && question.path == "a.txt" && question.serverTime != nil)
        #expect(question.choices["mine"] != nil && question.choices["theirs"] != nil)
        #expect(try await world.get("a.txt") == "two")
        try await device.answer("a.txt", .keepMine)
        _ = try await device.sync()
        #expect(try await world.get("a.txt") == nil)
    }

    @Test("Delete, item changed on the server, the user keeps the server's version: downloaded again")
    func deleteChangedOnServerTheirs() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try device.remove("a.txt")
        try await world.put("a.txt", "two")
        _ = try await device.sync()
        try await device.answer("a.txt", .takeTheirs)
        let report = try await device.sync()
        #expect(report.questions.isEmpty && device.read("a.txt") == "two")
    }

    @Test("Delete, item can't be deleted from server: inform, remove the entry")
    func deleteRefused() async throws {
        let world = try await World()
        try world.plant(".anchorage-status-403", "kept")
        let device = try await synced(world, [:])
        #expect(device.read(".anchorage-status-403") == "kept")
        try device.remove(".anchorage-status-403")
        let report = try await device.sync()
        #expect(report.notices.contains { $0.path == ".anchorage-status-403" && !$0.kept })
        #expect(try await device.pending().isEmpty)
        #expect(device.read(".anchorage-status-403") == "kept")  // the server still has it: mirrored back
    }

    @Test("Delete, other server error: inform, keep the entry")
    func deleteServerError() async throws {
        let world = try await World()
        try world.plant(".anchorage-status-503", "x")
        let device = try await synced(world, [:])
        try device.remove(".anchorage-status-503")
        let report = try await device.sync()
        #expect(report.notices.contains { $0.path == ".anchorage-status-503" && $0.kept })
        #expect(try await device.pending() == [".anchorage-status-503": .delete])
    }

    // MARK: Delete (triggered by sync with remote)

    @Test("Remote delete, item removed locally: nothing to do")
    func remoteDeleteRemovedLocally() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one", "b.txt": "two"])
        try await world.direct.delete("a.txt")
        try device.remove("a.txt")
        try await world.direct.delete("b.txt")
        let report = try await device.sync()
        #expect(report.questions.isEmpty && report.notices.isEmpty && report.deletedLocally == ["b.txt"])
        let pendingCheck = try await device.pending().isEmpty
        #expect(!device.exists("a.txt") && !device.exists("b.txt") && pendingCheck)
    }

    @Test("Remote delete, item changed locally: asks with the local date and offers to upload it again")
    func remoteDeleteChangedLocally() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try await world.direct.delete("a.txt")
        try device.write("a.txt", "edited")
        let report = try await device.sync()
        let question = try #require(report.questions.first)
        #expect(question.kind == .deletedOnServerChangedLocally && question.localSize == 6)
        #expect(question.choices["mine"]?.contains("upload") == true)
        #expect(device.read("a.txt") == "edited")
        try await device.answer("a.txt", .keepMine)
        _ = try await device.sync()
        #expect(try await world.get("a.txt") == "edited")
    }

    // MARK: Move / Rename

    @Test("Move, item removed from server: the local copy is uploaded at the new place")
    func moveRemovedFromServer() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try await device.move("a.txt", to: "b.txt")
        try await world.direct.delete("a.txt")
        let report = try await device.sync()
        #expect(report.uploaded == ["b.txt"] && report.questions.isEmpty)
        #expect(try await world.get("b.txt") == "one")
    }

    @Test("Move, item changed on the server before the move: moved, and the new version downloaded")
    func moveChangedEarlier() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try await world.put("a.txt", "two")
        try await device.move("a.txt", to: "b.txt", at: Date().addingTimeInterval(5))
        let report = try await device.sync()
        #expect(report.moved == ["a.txt → b.txt"] && report.questions.isEmpty)
        #expect(try await world.get("b.txt") == "two" && device.read("b.txt") == "two")
        #expect(try await world.get("a.txt") == nil)
    }

    @Test("Move, item changed on the server after the move: asks")
    func moveChangedLater() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try await device.move("a.txt", to: "b.txt", at: Date().addingTimeInterval(-60))
        try await world.put("a.txt", "two")
        let report = try await device.sync()
        let question = try #require(report.questions.first)
        #expect(question.kind == .moveChangedOnServer && question.path == "b.txt" && question.serverTime != nil)
        #expect(try await world.get("a.txt") == "two")
        try await device.answer("b.txt", .keepMine)
        _ = try await device.sync()
        #expect(try await world.get("b.txt") == "two" && device.read("b.txt") == "two")
    }

    @Test("Move, item can't be moved on the server: inform, remove the entry, the local copy goes back")
    func moveRefused() async throws {
        let world = try await World()
        try world.plant(".anchorage-status-403", "x")
        let device = try await synced(world, [:])
        try await device.move(".anchorage-status-403", to: "b.txt")
        let report = try await device.sync()
        #expect(report.notices.contains { $0.path == "b.txt" && !$0.kept })
        #expect(try await device.pending().isEmpty && device.read(".anchorage-status-403") == "x" && !device.exists("b.txt"))
    }

    @Test("Move, other server error: inform, keep the entry")
    func moveServerError() async throws {
        let world = try await World()
        try world.plant(".anchorage-status-500", "x")
        let device = try await synced(world, [:])
        try await device.move(".anchorage-status-500", to: "b.txt")
        let report = try await device.sync()
        #expect(report.notices.contains { $0.path == "b.txt" && $0.kept })
        #expect(try await device.pending() == ["b.txt": .move])
    }

    // MARK: Create Directory

    @Test("Create directory, a folder exists on the server and nothing was added inside: the entry goes")
    func folderExistsEmpty() async throws {
        let world = try await World()
        let device = try world.device()
        try device.makeFolder("d")
        try await world.direct.makeCollection("d")
        let report = try await device.sync()
        let pendingCheck = try await device.pending().isEmpty
        #expect(report.questions.isEmpty && report.createdFolders.isEmpty && pendingCheck)
    }

    @Test("Create directory, a folder exists and items were added inside: asks; merge adds them to it")
    func folderExistsMerge() async throws {
        let world = try await World()
        let device = try world.device()
        try device.write("d/new.txt", "mine")
        try await world.direct.makeCollection("d")
        try await world.put("d/theirs.txt", "theirs")
        let report = try await device.sync()
        let question = try #require(report.questions.first)
        #expect(question.kind == .folderExists && question.choices["mine"] != nil && question.choices["both"] != nil)
        try await device.answer("d", .keepMine)
        _ = try await device.sync()
        #expect(try await world.get("d/new.txt") == "mine" && device.read("d/theirs.txt") == "theirs")
    }

    @Test("Create directory, a folder exists and items were added inside: rename creates it under another name")
    func folderExistsRename() async throws {
        let world = try await World()
        let device = try world.device()
        try device.write("d/new.txt", "mine")
        try await world.direct.makeCollection("d")
        _ = try await device.sync()
        try await device.answer("d", .keepBoth)
        let report = try await device.sync()
        #expect(report.questions.isEmpty)
        #expect(try await world.get("d (2)/new.txt") == "mine" && device.read("d (2)/new.txt") == "mine")
        #expect(try await world.get("d/new.txt") == nil)
    }

    @Test("Create directory, a file of that name exists: asks for another name, and uses it")
    func folderNameTakenByFile() async throws {
        let world = try await World()
        let device = try world.device()
        try device.write("d/new.txt", "mine")
        try await world.put("d", "a file")
        let report = try await device.sync()
        #expect(report.questions.first?.kind == .fileExistsForFolder)
        try await device.answer("d", .merged(["name": .string("e")]))
        _ = try await device.sync()
        #expect(try await world.get("e/new.txt") == "mine" && device.read("e/new.txt") == "mine" && device.read("d") == "a file")
    }

    @Test("Create directory, can't be created: asks (another name, retry, or cancel when nothing depends on it)")
    func folderRefused() async throws {
        let world = try await World()
        let device = try world.device()
        try device.makeFolder(".anchorage-status-403")
        let report = try await device.sync()
        let question = try #require(report.questions.first)
        #expect(question.kind == .folderNotCreated && question.choices["theirs"] != nil && question.choices["mine"] != nil)
        try await device.answer(".anchorage-status-403", .takeTheirs)
        let after = try await device.sync()
        let pendingCheck = try await device.pending().isEmpty
        #expect(after.questions.isEmpty && pendingCheck && !device.exists(".anchorage-status-403"))
    }

    @Test("Create directory, other server error: inform, keep the entry")
    func folderServerError() async throws {
        let world = try await World()
        let device = try world.device()
        try device.makeFolder(".anchorage-status-503")
        let report = try await device.sync()
        #expect(report.notices.contains { $0.path == ".anchorage-status-503" && $0.kept })
        #expect(try await device.pending() == [".anchorage-status-503": .add])
    }

    // MARK: Upload

    @Test("Upload, no server item: uploaded")
    func uploadNew() async throws {
        let world = try await World()
        let device = try world.device()
        try device.write("docs/a.txt", "new")
        let report = try await device.sync()
        #expect(report.uploaded == ["docs/a.txt"] && report.createdFolders == ["docs"])
        let pendingCheck = try await device.pending().isEmpty
        #expect(try await world.get("docs/a.txt") == "new" && pendingCheck)
    }

    @Test("Upload, item changed on the server: asks")
    func uploadChangedOnServer() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try device.write("a.txt", "mine")
        try await world.put("a.txt", "theirs")
        let report = try await device.sync()
        let question = try #require(report.questions.first)
        #expect(question.kind == .changedOnBoth && question.localSize == 4 && question.serverSize == 6)
        #expect(try await world.get("a.txt") == "theirs" && device.read("a.txt") == "mine")
        try await device.answer("a.txt", .keepMine)
        _ = try await device.sync()
        #expect(try await world.get("a.txt") == "mine")
    }

    @Test("Upload, item already exists as the ArchCopy: overwritten")
    func uploadOverArchCopy() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try device.write("a.txt", "edited")
        let report = try await device.sync()
        #expect(report.uploaded == ["a.txt"] && report.questions.isEmpty)
        #expect(try await world.get("a.txt") == "edited")
    }

    @Test("Upload, item already exists and there was no ArchCopy: asks; both keeps a conflict copy")
    func uploadExistsWithoutArchCopy() async throws {
        let world = try await World()
        let device = try world.device()
        try device.write("a.txt", "mine")
        try await world.put("a.txt", "theirs")
        let report = try await device.sync()
        #expect(report.questions.first?.kind == .existsOnServer)
        try await device.answer("a.txt", .keepBoth)
        let after = try await device.sync()
        let copy = try #require(after.conflictCopies.first)
        #expect(copy.hasPrefix("a (conflict phone ") && copy.hasSuffix(").txt"))
        let pendingCheck = try await world.get(copy) == "mine"
        #expect(device.read("a.txt") == "theirs" && device.read(copy) == "mine" && pendingCheck)
    }

    @Test("Upload, target directory no longer exists: asks to re-create it")
    func uploadFolderGone() async throws {
        let world = try await World()
        let device = try await synced(world, ["d/a.txt": "one"])
        try device.write("d/b.txt", "new")
        try await device.scan()
        try await world.direct.delete("d")
        let report = try await device.sync()
        let question = try #require(report.questions.first { $0.path == "d/b.txt" })
        #expect(question.kind == .folderMissing)
        try await device.answer("d/b.txt", .keepMine)
        _ = try await device.sync()
        #expect(try await world.get("d/b.txt") == "new")
    }

    @Test("Upload, no space left on the server, or another error: inform, keep the entry")
    func uploadServerFullOrFailing() async throws {
        let world = try await World()
        let device = try world.device()
        try device.write(".anchorage-status-507", "big")
        try device.write(".anchorage-status-500", "x")
        try device.write(".anchorage-status-403", "x")
        let report = try await device.sync()
        for status in [507, 500, 403] {
            #expect(report.notices.contains { $0.path == ".anchorage-status-\(status)" && $0.kept })
        }
        #expect(report.notices.first { $0.path == ".anchorage-status-507" }?.message.contains("no space left on the server") == true)
        #expect(try await device.pending().count == 3)
    }

    // MARK: Download

    @Test("Download, a modified local copy exists: asks, with both modification dates")
    func downloadOverModified() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try await world.put("a.txt", "theirs")
        try device.write("a.txt", "mine")
        let report = try await device.sync()
        let question = try #require(report.questions.first)
        #expect(question.kind == .changedOnBoth && question.serverTime != nil)
        #expect(question.description.contains("on this device") && question.description.contains("on the server"))
        try await device.answer("a.txt", .takeTheirs)
        _ = try await device.sync()
        let pendingCheck = try await device.pending().isEmpty
        #expect(device.read("a.txt") == "theirs" && pendingCheck)
    }

    @Test("Download, the local copy is just a downloaded copy: overwritten without asking")
    func downloadOverPlainCopy() async throws {
        let world = try await World()
        let device = try await synced(world, ["a.txt": "one"])
        try await world.put("a.txt", "two")
        let report = try await device.sync()
        #expect(report.downloaded == ["a.txt"] && report.questions.isEmpty && device.read("a.txt") == "two")
    }

    @Test("Download, server error: inform, discard; the next sync downloads it")
    func downloadServerError() async throws {
        let world = try await World()
        let failing = FaultyTransport(world.transport(), failing: { $0.method == "GET" }, with: .serverError(500))
        let device = try world.device(transport: failing)
        try await world.put("a.txt", "one")
        let report = try await device.sync()
        #expect(report.notices.contains { $0.path == "a.txt" && !$0.kept } && !device.exists("a.txt"))
        #expect(device.listing() == [])
        failing.heal()
        _ = try await device.sync()
        #expect(device.read("a.txt") == "one")
    }

    @Test("Download, disk full: inform, discard the entry, nothing half-written in the folder")
    func downloadDiskFull() async throws {
        let world = try await World()
        let small = world.temporary.path("small")
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        let mount = try await ChildProcess.run("/bin/mount", arguments: ["-t", "tmpfs", "-o", "size=64k", "tmpfs", small]).status
        try #require(mount == 0, "mounting a 64 KiB tmpfs needs root")
        let device = FolderSync(folder: small, client: world.direct, store: MemoryStore(), account: "ada")
        try await world.put("small.txt", "fits")
        try await world.put("big.bin", String(repeating: "x", count: 256 << 10))
        let report = try await device.sync()
        #expect(report.notices.contains { $0.path == "big.bin" && !$0.kept && $0.message.contains("no space left on the device") })
        #expect(device.listing() == ["small.txt"])
        #expect(try await device.pending().isEmpty)
        #expect(try await ChildProcess.run("/bin/umount", arguments: [small]).status == 0)
    }
}
