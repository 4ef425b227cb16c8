#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials

/// Replaces a file in one step: readers see the old contents or the new, never a mix.
enum AtomicFile {
    /// Writes `bytes` to a new file beside `url`, created with `permissions`
    /// (so it is never readable by others, not even briefly), flushes it to
    /// disk and renames it over `url`.
    /// - Throws: ``UsersFileError`` naming the step that failed; `url` is then unchanged.
    static func replaceContents(of url: URL, with bytes: [UInt8], permissions: mode_t) throws(UsersFileError) {
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

    private static func failure(_ what: String, _ path: String) -> UsersFileError {
        UsersFileError(line: 0, "\(what) \(path): \(String(cString: strerror(errno)))")
    }
}
