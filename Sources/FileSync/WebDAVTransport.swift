public import AsyncHTTPClient
public import Foundation
import SyncHTTP
import Glibc
import NIOCore
import NIOHTTP1

/// What a WebDAV request sends as its body.
public enum WebDAVRequestBody: Sendable, Hashable {
    /// No body.
    case empty
    /// These bytes (a small XML request body).
    case bytes([UInt8])
    /// The file at this path, streamed from disk in chunks: memory stays bounded whatever its size.
    case file(path: String)
}

/// Where a WebDAV response's body goes.
public enum WebDAVResponseDestination: Sendable, Hashable {
    /// Into ``WebDAVResponse/body``, up to this many bytes (a larger answer fails).
    case memory(limit: Int)
    /// Into the file at this path (made or truncated, synced to disk) when the status is 2xx,
    /// streamed in chunks; any other answer's body goes to memory.
    case file(path: String)
}

/// One WebDAV request: method, path under the server's base URL, headers, body.
public struct WebDAVRequest: Sendable, Hashable {
    /// The method: `PROPFIND`, `GET`, `PUT`, `DELETE`, `MOVE`, `MKCOL`.
    public var method: String
    /// The item's path under the base URL, unescaped, `/`-separated, without a leading `/`
    /// (`""` is the base folder itself).
    public var path: String
    /// Extra headers (`Depth`, `If-Match`, `Destination`, …).
    public var headers: [String: String]
    /// The body.
    public var body: WebDAVRequestBody
    /// Where the answer's body goes.
    public var destination: WebDAVResponseDestination

    /// Makes a request.
    public init(
        method: String, path: String, headers: [String: String] = [:], body: WebDAVRequestBody = .empty,
        destination: WebDAVResponseDestination = .memory(limit: 1 << 20)
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.destination = destination
    }
}

/// A WebDAV server's answer.
public struct WebDAVResponse: Sendable, Hashable {
    /// The HTTP status.
    public var status: Int
    /// The headers, names in lower case.
    public var headers: [String: String]
    /// The body, when it went to memory.
    public var body: [UInt8]

    /// Makes a response.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends WebDAV requests: over HTTP (``WebDAVHTTPTransport``), or through a
/// wrapper that changes what passes (a test's fault injection).
public protocol WebDAVTransport: Sendable {
    /// The server's base URL, which paths are relative to.
    var baseURL: URL { get }
    /// Sends `request` and returns the answer, whatever its status.
    /// - Throws: ``WebDAVError`` when no answer came (no connection, a cut, a time-out) or
    ///   the answer could not be stored (a full disk on the device).
    func send(_ request: WebDAVRequest) async throws -> WebDAVResponse
}

/// Sends WebDAV requests over HTTP/1.1 with AsyncHTTPClient, with HTTP Basic
/// credentials; file bodies stream from and to disk in 64 KiB chunks.
///
/// ```swift
/// let transport = WebDAVHTTPTransport(
///     baseURL: URL(string: "https://files.example.com/remote.php/dav/files/ada/")!,
///     username: "ada", password: secret)
/// let client = WebDAVClient(transport: transport)
/// ```
public struct WebDAVHTTPTransport: WebDAVTransport {
    /// The server's base URL; it should end with `/`.
    public let baseURL: URL
    /// The `Authorization` header sent with every request, if any.
    let authorization: String?
    /// How long one request may take.
    public let timeout: Duration
    /// The AsyncHTTPClient client requests go through.
    public let client: HTTPClient

    /// Makes a transport.
    /// - Parameters:
    ///   - baseURL: the folder on the server that is synced (`http://host/dav/`).
    ///   - username: the account's name; `nil` sends no credentials.
    ///   - password: its password.
    ///   - timeout: how long one request may take (a 1 GB body needs minutes).
    ///   - client: the HTTP client; by default SyncHTTP's `HTTPClientTransport.sharedClient`, which never needs
    ///     shutting down, fails a refused connection at once and gives up a connect after 10 seconds.
    public init(
        baseURL: URL, username: String? = nil, password: String = "", timeout: Duration = .seconds(3600),
        client: HTTPClient = HTTPClientTransport.sharedClient
    ) {
        self.baseURL = baseURL
        self.timeout = timeout
        self.client = client
        if let username {
            self.authorization = "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
        } else {
            self.authorization = nil
        }
    }

    /// The URL of `path` under ``baseURL``, each segment percent-encoded.
    public func url(of path: String) -> String {
        var base = baseURL.absoluteString
        if !base.hasSuffix("/") { base += "/" }
        return base + WebDAVPath.escape(path)
    }

    /// Sends `request`.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Kind/noAnswer`` or ``WebDAVError/Kind/deviceFull``).
    ///
    /// A connection the server did not take in time (busy, its backlog full) is tried again for up to
    /// ``connectPatience``; a refused one fails at once.
    public func send(_ request: WebDAVRequest) async throws -> WebDAVResponse {
        let start = ContinuousClock.now
        while true {
            do {
                return try await sendOnce(request)
            } catch let error as WebDAVError where error.connectionNotTaken && start.duration(to: .now) < Self.connectPatience {
                continue
            }
        }
    }

    /// How long a request keeps trying to connect to a server that does not take its connection.
    public static let connectPatience: Duration = .seconds(30)

    private func sendOnce(_ request: WebDAVRequest) async throws -> WebDAVResponse {
        if case .file(let path) = request.body { return try await sendFile(request, from: path) }
        var http = HTTPClientRequest(url: url(of: request.path))
        http.method = HTTPMethod(rawValue: request.method)
        if let authorization { http.headers.add(name: "Authorization", value: authorization) }
        for (name, value) in request.headers { http.headers.add(name: name, value: value) }
        if case .memory = request.destination {
            // Listings and other answers read into memory may come compressed; a file's bytes are asked for
            // as they are (a compressing server would also change the file's ETag).
            http.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        }
        switch request.body {
        case .empty:
            break
        case .bytes(let bytes):
            http.body = .bytes(ByteBuffer(bytes: bytes))
        case .file:
            break  // sent by sendFile
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(http, timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000))
        } catch let error as WebDAVError {
            throw error
        } catch {
            throw noAnswer(request, error)
        }
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name.lowercased()] = header.value }
        let status = Int(response.status.code)
        do {
            if case .file(let path) = request.destination, (200..<300).contains(status) {
                try await FileChunks.write(response.body, to: path)
                return WebDAVResponse(status: status, headers: headers)
            }
            var limit = 1 << 20
            if case .memory(let given) = request.destination { limit = given }
            var collected: [UInt8] = []
            for try await buffer in response.body {
                guard collected.count + buffer.readableBytes <= limit else {
                    throw WebDAVError(
                        .badAnswer, method: request.method, path: request.path, status: status,
                        detail: "the answer is larger than \(limit) bytes")
                }
                collected.append(contentsOf: buffer.readableBytesView)
            }
            if let coding = try? ContentCoding.named(headers["content-encoding"]), coding.looksEncoded(collected) {
                let decoder = coding.decoder(limit: limit)
                do {
                    try decoder.take(ByteBuffer(bytes: collected))
                    collected = try decoder.finish()
                } catch {
                    throw WebDAVError(
                        .badAnswer, method: request.method, path: request.path, status: status,
                        detail: error == .tooLarge ? "the answer is larger than \(limit) bytes decoded" : "the answer is not valid \(coding.rawValue)")
                }
                headers["content-encoding"] = nil
            }
            return WebDAVResponse(status: status, headers: headers, body: collected)
        } catch let error as WebDAVError {
            throw error
        } catch {
            throw noAnswer(request, error, status: status)
        }
    }

    /// The error of a request that got no (whole) answer: one line saying why (`cannot connect to
    /// host:port: connection refused`, `… did not answer within …`).
    func noAnswer(_ request: WebDAVRequest, _ error: any Error, status: Int? = nil) -> WebDAVError {
        let port = baseURL.port ?? (baseURL.scheme?.lowercased() == "https" ? 443 : 80)
        let host = baseURL.host ?? "the server"
        let detail: String
        if let line = ConnectionFailure.describe(error, host: host, port: port) {
            detail = line
        } else if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout {
            detail = "the server at \(host):\(port) did not answer within \(timeout)"
        } else {
            detail = "\(error)"
        }
        var failure = WebDAVError(.noAnswer, method: request.method, path: request.path, status: status, detail: detail)
        if let error = error as? HTTPClientError {
            failure.connectionNotTaken = error == .getConnectionFromPoolTimeout || error == .connectTimeout
        }
        return failure
    }
}

extension WebDAVHTTPTransport {
    /// Sends a request whose body is a file. Each chunk is read only once the one before has been
    /// written to the connection (AsyncHTTPClient's `StreamWriter` futures), so at most one chunk
    /// is in memory however fast the disk and however slow the network.
    func sendFile(_ request: WebDAVRequest, from path: String) async throws -> WebDAVResponse {
        let file = try FileChunks(path: path)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw WebDAVError(.deviceFile, method: request.method, path: request.path, detail: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        // Closed when the body stream lets go of it, not when this function returns: a server may answer
        // (a refusal) before the whole body is sent, and the stream's next read must not meet a closed
        // descriptor, or another file's that took its number.
        let source = OpenFile(descriptor)
        var headers = HTTPHeaders()
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        for (name, value) in request.headers { headers.add(name: name, value: value) }
        let loop = client.eventLoopGroup.any()
        let body = HTTPClient.Body.stream(contentLength: file.length) { writer in
            @Sendable func next() -> EventLoopFuture<Void> {
                var buffer = ByteBufferAllocator().buffer(capacity: 1 << 16)
                var count = 0
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 1 << 16) { raw in
                    repeat { count = read(source.descriptor, raw.baseAddress, 1 << 16) } while count < 0 && errno == EINTR
                    return max(count, 0)
                }
                if count < 0 {
                    return loop.makeFailedFuture(
                        WebDAVError(.deviceFile, method: request.method, path: request.path, detail: "cannot read \(path)"))
                }
                if count == 0 { return loop.makeSucceededVoidFuture() }
                // The next chunk is read in a later turn of the event loop, once it has seen whether the
                // connection can take more: a chain of immediate callbacks would queue the whole file.
                return writer.write(.byteBuffer(buffer)).flatMap { loop.flatSubmit { next() } }
            }
            return next()
        }
        let response: HTTPClient.Response
        do {
            let http = try HTTPClient.Request(
                url: url(of: request.path), method: HTTPMethod(rawValue: request.method), headers: headers, body: body)
            response = try await client.execute(
                request: http, deadline: .now() + .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000)
            ).get()
        } catch let error as WebDAVError {
            throw error
        } catch {
            throw noAnswer(request, error)
        }
        var answerHeaders: [String: String] = [:]
        for header in response.headers { answerHeaders[header.name.lowercased()] = header.value }
        return WebDAVResponse(
            status: Int(response.status.code), headers: answerHeaders, body: response.body.map { Array($0.readableBytesView) } ?? [])
    }
}

/// Paths of items under the synced folder: `/`-separated, unescaped, no leading `/`.
public enum WebDAVPath {
    /// `path` with each segment percent-encoded for a URL.
    public static func escape(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            var out = ""
            for byte in segment.utf8 {
                let c = Character(Unicode.Scalar(byte))
                if c.isASCII && (c.isLetter || c.isNumber || "-._~!$&'()*+,;=:@".contains(c)) {
                    out.append(c)
                } else {
                    out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
            }
            return out
        }.joined(separator: "/")
    }

    /// `text` with `%XX` escapes decoded; `nil` when an escape is malformed or the bytes are not UTF-8.
    public static func unescape(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The folder holding `path` (`""` for an item at the top).
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }

    /// The last segment of `path`.
    public static func name(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// `name` inside `folder`.
    public static func join(_ folder: String, _ name: String) -> String { folder.isEmpty ? name : folder + "/" + name }
}

/// Files streamed to and from disk.
struct FileChunks: Sendable {
    let path: String
    let length: Int64

    init(path: String) throws {
        let size: Int64
        do {
            size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        } catch {
            throw WebDAVError(.deviceFile, method: "PUT", path: path, detail: "cannot read \(path): \(error.localizedDescription)")
        }
        self.path = path
        self.length = size
    }

    /// Writes `body` to a file at `path` (made or truncated) and syncs it to disk.
    static func write(_ body: HTTPClientResponse.Body, to path: String) async throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw deviceError(path, errno) }
        var closed = false
        defer { if !closed { close(descriptor) } }
        for try await buffer in body {
            try buffer.withUnsafeReadableBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw deviceError(path, errno)
                    }
                    offset += written
                }
            }
        }
        guard fsync(descriptor) == 0 else { throw deviceError(path, errno) }
        closed = true
        guard close(descriptor) == 0 else { throw deviceError(path, errno) }
    }

    static func deviceError(_ path: String, _ code: Int32) -> WebDAVError {
        let kind: WebDAVError.Kind = code == ENOSPC || code == EDQUOT ? .deviceFull : .deviceFile
        return WebDAVError(kind, method: "GET", path: path, detail: "cannot write \(path): \(String(cString: strerror(code)))")
    }
}

/// A file descriptor closed when the last reference to it goes.
private final class OpenFile: Sendable {
    let descriptor: Int32

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }
}
