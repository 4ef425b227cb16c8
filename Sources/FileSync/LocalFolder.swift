import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file or folder as the device's disk holds it.
struct LocalItem: Sendable, Hashable {
    var path: String
    var isDirectory: Bool
    /// Modification time in nanoseconds since 1970.
    var modifiedNanoseconds: Int64
    var size: Int64

    var modified: Date { Date(timeIntervalSince1970: Double(modifiedNanoseconds) / 1e9) }
}

/// The synced folder on the device: paths relative to its root.
struct LocalFolder: Sendable {
    /// The part files downloads are written to end with this.
    static let partSuffix = ".anchorage-part"

    let root: String

    func absolute(_ path: String) -> String { path.isEmpty ? root : root + "/" + path }

    /// The item at `path`, or `nil`.
    func item(_ path: String) -> LocalItem? {
        var info = stat()
        guard lstat(absolute(path), &info) == 0 else { return nil }
        let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        #else
        let modified = info.st_mtim
        #endif
        let nanoseconds = Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec)
        return LocalItem(path: path, isDirectory: isDirectory, modifiedNanoseconds: nanoseconds, size: isDirectory ? 0 : Int64(info.st_size))
    }

    /// Every file and folder under the root (part files are removed: a crash left them), parents before children.
    func scan() -> [LocalItem] {
        var items: [LocalItem] = []
        var folders = [""]
        while let folder = folders.popLast() {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: absolute(folder)) else { continue }
            for name in names.sorted() {
                let path = WebDAVPath.join(folder, name)
                if name.hasSuffix(Self.partSuffix) {
                    unlink(absolute(path))
                    continue
                }
                guard let item = item(path) else { continue }
                var info = stat()
                if lstat(absolute(path), &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK { continue }
                items.append(item)
                if item.isDirectory { folders.append(path) }
            }
        }
        return items.sorted { $0.path.split(separator: "/").count < $1.path.split(separator: "/").count || ($0.path.split(separator: "/").count == $1.path.split(separator: "/").count && $0.path < $1.path) }
    }

    /// A new part file's path next to `path`.
    func partFile(for path: String) -> String {
        let parent = WebDAVPath.parent(of: path)
        let name = "." + WebDAVPath.name(of: path) + "." + String(UInt64.random(in: 0...UInt64.max), radix: 36) + Self.partSuffix
        return absolute(WebDAVPath.join(parent, name))
    }

    /// Puts `part` at `path` in one step (a rename in the same folder), syncing the folder unless
    /// `syncingFolder` is `false` (then the caller syncs it, ``syncFolders(of:)``, before it relies on the rename).
    func install(_ part: String, at path: String, syncingFolder: Bool = true) throws {
        guard rename(part, absolute(path)) == 0 else {
            let code = errno
            unlink(part)
            throw WebDAVError(.deviceFile, method: "GET", path: path, detail: "cannot rename into place: \(String(cString: strerror(code)))")
        }
        if syncingFolder { syncFolders(of: [path]) }
    }

    /// Makes the bytes of the files at `paths` (absolute) durable: on Linux with one `syncfs` of the
    /// folder's file system, elsewhere with an `fsync` of each.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Code/deviceFile``) when the disk does not take them.
    func flush(_ paths: [String]) throws {
        guard !paths.isEmpty else { return }
        func failure(_ path: String, _ code: Int32) -> WebDAVError {
            WebDAVError(.deviceFile, method: "GET", path: path, detail: "cannot sync \(path) to disk: \(String(cString: strerror(code)))")
        }
        #if os(Linux)
        if let syncFileSystem = Self.syncFileSystem {
            let descriptor = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure(root, errno) }
            defer { close(descriptor) }
            guard syncFileSystem(descriptor) == 0 else { throw failure(root, errno) }
            return
        }
        #endif
        for path in paths {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure(path, errno) }
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else { throw failure(path, errno) }
        }
    }

    #if os(Linux)
    /// The C library's `syncfs(2)` (Linux), which Swift's Glibc module does not declare, if it has one.
    private static let syncFileSystem: (@convention(c) (Int32) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "syncfs") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
    }()
    #endif

    /// Makes the renames into the folders of `paths` durable: each folder synced once.
    func syncFolders(of paths: some Sequence<String>) {
        for parent in Set(paths.map(WebDAVPath.parent(of:))) {
            let folder = open(absolute(parent), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if folder >= 0 {
                fsync(folder)
                close(folder)
            }
        }
    }

    /// Makes the folder `path` and its parents.
    func makeDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: absolute(path), withIntermediateDirectories: true)
    }

    /// Removes the file or the folder (with its contents) at `path`.
    func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: absolute(path))
    }

    /// Moves `source` to `destination`, making the destination's folder.
    func move(_ source: String, to destination: String) throws {
        try makeDirectory(WebDAVPath.parent(of: destination))
        guard rename(absolute(source), absolute(destination)) == 0 else {
            throw WebDAVError(.deviceFile, method: "MOVE", path: source, detail: "cannot move to \(destination): \(String(cString: strerror(errno)))")
        }
    }
}
