public import Foundation

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
    /// Into the file at this path (made or truncated) when the status is 2xx, streamed in chunks, and
    /// synced to disk unless `syncing` is `false` (the caller then makes it durable, e.g. many files
    /// with one flush); any other answer's body goes to memory.
    case file(path: String, syncing: Bool = true)
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
