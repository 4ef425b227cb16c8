#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NIOCore
import SyncHTTPClient

/// Files streamed to and from disk, 64 KiB at a time.
enum FileChunks {
    /// The bytes read and written at a time.
    static let chunkSize = 1 << 16

    /// A request body that streams the file at `path`: a chunk is read only when the transport asks for it,
    /// once the connection has taken the one before, so at most about one chunk is in memory however fast
    /// the disk and however slow the network.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Code/deviceFile``) when the file cannot be opened.
    static func requestBody(from path: String, for request: WebDAVRequest) throws -> HTTPClientTransport.StreamedBody {
        let length: Int64
        do {
            length = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        } catch {
            throw WebDAVError(.deviceFile, method: request.method, path: request.path, detail: "cannot read \(path): \(error.localizedDescription)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw WebDAVError(.deviceFile, method: request.method, path: request.path, detail: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        // Closed when the body lets go of it, not when the request returns: a server may answer (a refusal)
        // before the whole body is sent, and a later read must not meet a closed descriptor, or another
        // file's that took its number.
        let file = OpenFile(descriptor)
        let failure = WebDAVError(.deviceFile, method: request.method, path: request.path, detail: "cannot read \(path)")
        return HTTPClientTransport.StreamedBody(length: length) {
            var buffer = ByteBufferAllocator().buffer(capacity: chunkSize)
            var count = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: chunkSize) { raw in
                repeat { count = read(file.descriptor, raw.baseAddress, chunkSize) } while count < 0 && errno == EINTR
                return max(count, 0)
            }
            if count < 0 { throw failure }
            return count == 0 ? nil : buffer
        }
    }

    /// Writes `body` to a file at `path` (made or truncated) as it arrives, and syncs it to disk unless
    /// `syncing` is `false`.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Code/deviceFull`` or ``WebDAVError/Code/deviceFile``) when
    ///   the file cannot be written; what reading `body` throws.
    static func write<Body: AsyncSequence>(_ body: Body, to path: String, syncing: Bool = true) async throws
    where Body.Element == ByteBuffer {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw deviceError(path, errno) }
        var closed = false
        defer { if !closed { close(descriptor) } }
        for try await buffer in body {
            try buffer.withUnsafeReadableBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = systemWrite(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw deviceError(path, errno)
                    }
                    offset += written
                }
            }
        }
        if syncing { guard fsync(descriptor) == 0 else { throw deviceError(path, errno) } }
        closed = true
        guard close(descriptor) == 0 else { throw deviceError(path, errno) }
    }

    static func deviceError(_ path: String, _ code: Int32) -> WebDAVError {
        WebDAVError(
            code == ENOSPC || code == EDQUOT ? .deviceFull : .deviceFile, method: "GET", path: path,
            detail: "cannot write \(path): \(String(cString: strerror(code)))")
    }
}

/// A file descriptor closed when the last reference to it goes.
final class OpenFile: Sendable {
    let descriptor: Int32

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }
}

/// The C library's `write(2)`, named apart from the `write` functions of this file.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #elseif canImport(Musl)
    Musl.write(descriptor, bytes, count)
    #else
    Darwin.write(descriptor, bytes, count)
    #endif
}
