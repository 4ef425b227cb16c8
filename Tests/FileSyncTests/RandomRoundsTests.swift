import FileSync
import Foundation
import SyncCore
import SyncTesting
import Testing

/// Two devices and the server, changed at random while the devices' requests are dropped and cut.
@Suite("FolderSync: two devices, the server, random changes and a bad network")
struct RandomRoundsTests {
    /// What every actor wrote, and which versions a user replaced or deleted knowingly.
    final class Ledger: @unchecked Sendable {
        // Used by one test task only.
        var written: Set<String> = []
        var replaced: Set<String> = []
        var counter = 0

        func next(_ generator: inout SeededGenerator) -> String {
            counter += 1
            let text = "w\(counter)-" + String(repeating: "x", count: Int(generator.next() % 40))
            written.insert(text)
            return text
        }
    }

    static let names = ["a.txt", "b.txt", "c.md", "d1/a.txt", "d1/e.txt", "d2/f.txt", "d1/sub/g.txt"]
    static let folders = ["d1", "d2", "d1/sub"]

    @Test("200 rounds: every file ends identical everywhere, and no version a user wrote is lost")
    func randomRounds() async throws {
        let world = try await World()
        var generator = SeededGenerator(seed: 20_261_124)
        let faultsPhone = FaultyTransport(world.transport(), seed: 11, probability: 0.05)
        let faultsLaptop = FaultyTransport(world.transport(), seed: 12, probability: 0.05)
        let phone = try world.device("phone", policy: .keepBoth, transport: faultsPhone)
        let laptop = try world.device("laptop", policy: .keepBoth, transport: faultsLaptop)
        let ledger = Ledger()

        for _ in 0..<200 {
            let actor = Int(generator.next() % 3)
            let operation = Int(generator.next() % 10)
            let name = Self.names[Int(generator.next() % UInt64(Self.names.count))]
            let other = Self.names[Int(generator.next() % UInt64(Self.names.count))]
            let folder = Self.folders[Int(generator.next() % UInt64(Self.folders.count))]
            if actor < 2 {
                let device = actor == 0 ? phone : laptop
                try await change(device, operation, name, other, folder, ledger, &generator)
            } else {
                try await changeServer(world, operation, name, other, folder, ledger, &generator)
            }
            if generator.next() % 2 == 0 {
                _ = try? await (generator.next() % 2 == 0 ? phone : laptop).sync()
            }
        }
        faultsPhone.heal()
        faultsLaptop.heal()
        for _ in 0..<3 {
            _ = try await phone.sync()
            _ = try await laptop.sync()
        }
        _ = try await phone.sync()

        let server = try await serverFiles(world)
        let onPhone = localFiles(phone)
        let onLaptop = localFiles(laptop)
        #expect(server.count >= 3)
        #expect(onPhone == server)
        #expect(onLaptop == server)
        let questions = try await phone.questions().count + laptop.questions().count
        #expect(questions == 0)
        let kept = Set(server.values)
        let lost = ledger.written.subtracting(ledger.replaced).subtracting(kept)
        #expect(lost.isEmpty, "versions lost: \(lost.sorted())")
        #expect(faultsPhone.faults + faultsLaptop.faults > 0)
    }

    func change(
        _ device: FolderSync, _ operation: Int, _ name: String, _ other: String, _ folder: String, _ ledger: Ledger,
        _ generator: inout SeededGenerator
    ) async throws {
        switch operation {
        case 0...3:  // create or edit
            if let old = device.read(name) { ledger.replaced.insert(old) }
            if isFile(device.folder + "/" + WebDAVPath.parent(of: name)) { return }
            if FileManager.default.fileExists(atPath: device.folder + "/" + name), device.read(name) == nil { return }
            try device.write(name, ledger.next(&generator))
        case 4, 5:  // delete
            if let old = device.read(name) {
                ledger.replaced.insert(old)
                try device.remove(name)
            }
        case 6, 7:  // move
            guard name != other, device.read(name) != nil, !device.exists(other),
                !isFile(device.folder + "/" + WebDAVPath.parent(of: other))
            else { return }
            try? await device.move(name, to: other)
        case 8:  // make a folder
            if !device.exists(folder) && !isFile(device.folder + "/" + WebDAVPath.parent(of: folder)) { try device.makeFolder(folder) }
        default:  // delete a folder
            guard device.exists(folder) else { return }
            for path in device.listing() where path.hasPrefix(folder + "/") {
                if let old = device.read(path) { ledger.replaced.insert(old) }
            }
            try? FileManager.default.removeItem(atPath: device.folder + "/" + folder)
        }
    }

    func changeServer(
        _ world: World, _ operation: Int, _ name: String, _ other: String, _ folder: String, _ ledger: Ledger,
        _ generator: inout SeededGenerator
    ) async throws {
        let server = world.direct
        switch operation {
        case 0...3:
            if let item = try await server.item(at: name), item.isDirectory { return }
            if let old = try await world.get(name) { ledger.replaced.insert(old) }
            var prefix = ""
            for segment in WebDAVPath.parent(of: name).split(separator: "/") {
                prefix = WebDAVPath.join(prefix, String(segment))
                if let item = try await server.item(at: prefix) {
                    if !item.isDirectory { return }
                } else {
                    try await server.makeCollection(prefix)
                }
            }
            try await world.put(name, ledger.next(&generator))
        case 4, 5:
            if let item = try await server.item(at: name), !item.isDirectory {
                if let old = try await world.get(name) { ledger.replaced.insert(old) }
                try await server.delete(name)
            }
        case 6, 7:
            let destinationFolder = WebDAVPath.parent(of: other)
            let folderThere = destinationFolder.isEmpty ? true : try await server.item(at: destinationFolder)?.isDirectory == true
            guard name != other, folderThere, let item = try await server.item(at: name), !item.isDirectory,
                try await server.item(at: other) == nil
            else { return }
            try await server.move(name, to: other)
        case 8:
            let parent = WebDAVPath.parent(of: folder)
            let parentThere = parent.isEmpty ? true : try await server.item(at: parent)?.isDirectory == true
            if parentThere, try await server.item(at: folder) == nil {
                try await server.makeCollection(folder)
            }
        default:
            guard let item = try await server.item(at: folder), item.isDirectory else { return }
            for (_, text) in try await serverFiles(world, under: folder) { ledger.replaced.insert(text) }
            try await server.delete(folder)
        }
    }

    func isFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// Every file on the server (under `folder`), path → content.
    func serverFiles(_ world: World, under folder: String = "") async throws -> [String: String] {
        var files: [String: String] = [:]
        var folders = [folder]
        while let current = folders.popLast() {
            for item in try await world.direct.contents(of: current) where item.path != current {
                if item.isDirectory {
                    folders.append(item.path)
                } else {
                    files[item.path] = try await world.get(item.path)
                }
            }
        }
        return files
    }

    /// Every file in the device's folder, path → content.
    func localFiles(_ device: FolderSync) -> [String: String] {
        var files: [String: String] = [:]
        for path in device.listing() where !isDirectory(device.folder + "/" + path) {
            files[path] = device.read(path)
        }
        return files
    }

    func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
