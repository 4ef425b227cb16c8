#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Replaces a file in one step: readers see the old contents or the new, never a mix.
package enum AtomicFile {
    /// Why a file cannot be read or replaced, in one line naming the path and the system's reason.
    package struct Failure: Error, Sendable {
        /// `cannot open /path: No such file or directory`.
        package var message: String
    }

    /// The file's bytes.
    /// - Throws: ``Failure`` saying in one line why the file cannot be read.
    package static func contents(of url: URL) throws(Failure) -> [UInt8] {
        let path = url.path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read", path)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Writes `bytes` to a new file beside `url`, created with `permissions`
    /// (so it is never readable by others, not even briefly), flushes it to
    /// disk and renames it over `url`.
    /// - Throws: ``Failure`` naming the step that failed; `url` is then unchanged.
    package static func replaceContents(of url: URL, with bytes: [UInt8], permissions: mode_t) throws(Failure) {
        let path = url.path
        let temporaryPath =
            url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
            .path
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        guard descriptor >= 0 else { throw failure("cannot create", temporaryPath) }
        var renamed = false
        defer { if !renamed { unlink(temporaryPath) } }

        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                let error = failure("cannot write", temporaryPath)
                close(descriptor)
                throw error
            }
            offset += count
        }
        guard fsync(descriptor) == 0 else {
            let error = failure("cannot flush", temporaryPath)
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw failure("cannot close", temporaryPath) }
        guard rename(temporaryPath, path) == 0 else { throw failure("cannot rename over", path) }
        renamed = true
    }

    private static func failure(_ what: String, _ path: String) -> Failure {
        Failure(message: "\(what) \(path): \(String(cString: strerror(errno)))")
    }
}

/// One version of a file, told apart cheaply: device, inode, size and
/// modification time. Replacing the file atomically (a rename) changes the
/// inode; an edit in place changes the size or the time.
package struct FileVersion: Hashable, Sendable {
    private let device: UInt64
    private let inode: UInt64
    private let size: Int64
    private let modifiedSeconds: Int64
    private let modifiedNanoseconds: Int64

    /// The version of the file at `path` now, or `nil` when there is no file there.
    package static func current(atPath path: String) -> FileVersion? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        #if canImport(Darwin)
        let modified = status.st_mtimespec
        #else
        let modified = status.st_mtim
        #endif
        return FileVersion(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modifiedSeconds: Int64(modified.tv_sec), modifiedNanoseconds: Int64(modified.tv_nsec))
    }
}
