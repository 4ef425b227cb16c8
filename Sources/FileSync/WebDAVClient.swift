import Foundation

/// A WebDAV client: `PROPFIND`, `GET`, `PUT`, `DELETE`, `MOVE` and `MKCOL`
/// with ETag preconditions, file bodies streamed from and to disk.
///
/// ```swift
/// let client = WebDAVClient(transport: WebDAVHTTPTransport(baseURL: url, username: "ada", password: secret))
/// let etag = try await client.upload(from: "/home/ada/notes.txt", to: "notes.txt", precondition: .absent)
/// try await client.download("notes.txt", to: "/tmp/notes.txt")
/// ```
///
/// Every method throws ``WebDAVError`` for a status it does not expect
/// (``WebDAVError/init(status:method:path:detail:)`` maps it).
public struct WebDAVClient: Sendable {
    /// What the server must hold for a write to go ahead.
    public enum Precondition: Sendable, Hashable {
        /// Anything (no precondition header).
        case none
        /// No item at the path (`If-None-Match: *`).
        case absent
        /// The item with this ETag (`If-Match`).
        case etag(String)
    }

    /// The transport requests go through.
    public let transport: any WebDAVTransport

    /// Makes a client.
    public init(transport: any WebDAVTransport) {
        self.transport = transport
    }

    /// The path part of the base URL, e.g. `/dav/`.
    var basePath: String {
        var path = transport.baseURL.path
        if path.isEmpty { path = "/" }
        if !path.hasSuffix("/") { path += "/" }
        return path
    }

    /// The body of a `PROPFIND`, with or without `getetag` (a server that digests file contents for its
    /// ETags, as Apache's `FileETag Digest` does, reads every file listed when it is asked for them).
    private static func propfindBody(etags: Bool) -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>\
            <d:resourcetype/>\(etags ? "<d:getetag/>" : "")<d:getlastmodified/><d:getcontentlength/><oc:fileid/>\
            </d:prop></d:propfind>
            """.utf8)
    }

    /// The item at `path` (depth 0), or `nil` when there is none.
    /// - Throws: ``WebDAVError``.
    public func item(at path: String) async throws -> WebDAVItem? {
        do {
            return try await propfind(path, depth: 0).first { $0.path == path }
        } catch WebDAVError.Code.notFound, WebDAVError.Code.parentMissing {
            return nil
        }
    }

    /// The items in the folder `path` (depth 1), the folder itself first; without their ETags when
    /// `etags` is `false`.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Code/notFound`` when there is no such folder).
    public func contents(of path: String, etags: Bool = true) async throws -> [WebDAVItem] {
        try await propfind(path, depth: 1, etags: etags)
    }

    /// `PROPFIND` with `Depth: 0` or `1`, asking for the ETags unless `etags` is `false`. Every item's
    /// ``WebDAVItem/seen`` is the answer's `Date`.
    /// - Throws: ``WebDAVError``.
    public func propfind(_ path: String, depth: Int, etags: Bool = true) async throws -> [WebDAVItem] {
        let request = WebDAVRequest(
            method: "PROPFIND", path: path,
            headers: ["Depth": depth == 0 ? "0" : "1", "Content-Type": "application/xml; charset=utf-8"],
            body: .bytes(Self.propfindBody(etags: etags)), destination: .memory(limit: MultistatusParser.maxBytes))
        let response = try await transport.send(request)
        guard response.status == 207 else { throw error(response, request) }
        var items = try MultistatusParser.items(in: response.body, basePath: basePath)
        let seen = response.headers["date"].flatMap(HTTPDate.parse)
        for index in items.indices { items[index].seen = seen }
        if let index = items.firstIndex(where: { $0.path == path }), index != 0 { items.insert(items.remove(at: index), at: 0) }
        return items
    }

    /// Downloads the file at `path` to `file` (made or replaced, synced to disk).
    /// - Returns: the ETag of the version downloaded, when the server sent one.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Code/deviceFull`` when the device's disk is full).
    @discardableResult
    public func download(_ path: String, to file: String) async throws -> String? {
        try await fetch(path, to: file).etag
    }

    /// Downloads the file at `path` to `file` (made or replaced; synced to disk unless `syncing` is
    /// `false`, when the caller makes it durable before relying on it).
    /// - Returns: the version downloaded as the answer's headers describe it: `ETag`, `Last-Modified`,
    ///   `Content-Length` and `Date`, each when the server sent it.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Code/deviceFull`` when the device's disk is full).
    public func fetch(_ path: String, to file: String, syncing: Bool = true) async throws -> WebDAVItem {
        let request = WebDAVRequest(method: "GET", path: path, destination: .file(path: file, syncing: syncing))
        let response = try await transport.send(request)
        guard response.status == 200 else { throw error(response, request) }
        return WebDAVItem(
            path: path, isDirectory: false, etag: response.headers["etag"],
            modified: response.headers["last-modified"].flatMap(HTTPDate.parse),
            size: response.headers["content-length"].flatMap { Int64($0) },
            seen: response.headers["date"].flatMap(HTTPDate.parse))
    }

    /// Uploads `file` to `path`, if the server holds what `precondition` says.
    /// - Returns: the new version's ETag, when the server sent one.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Code/changedOnServer`` when the precondition fails,
    ///   ``WebDAVError/Code/parentMissing`` when the folder is gone).
    @discardableResult
    public func upload(from file: String, to path: String, precondition: Precondition) async throws -> String? {
        let request = WebDAVRequest(method: "PUT", path: path, headers: headers(for: precondition), body: .file(path: file))
        let response = try await transport.send(request)
        guard (200..<300).contains(response.status) else { throw error(response, request) }
        return response.headers["etag"]
    }

    /// Deletes the item at `path`, if the server holds what `precondition` says.
    /// - Throws: ``WebDAVError``.
    public func delete(_ path: String, precondition: Precondition = .none) async throws {
        let request = WebDAVRequest(method: "DELETE", path: path, headers: headers(for: precondition))
        let response = try await transport.send(request)
        guard (200..<300).contains(response.status) else { throw error(response, request) }
    }

    /// Moves the item at `source` to `destination` (never over an existing item).
    /// - Throws: ``WebDAVError`` (412 when something is at `destination` or `precondition` fails).
    public func move(_ source: String, to destination: String, precondition: Precondition = .none) async throws {
        var headers = headers(for: precondition)
        var base = transport.baseURL.absoluteString
        if !base.hasSuffix("/") { base += "/" }
        headers["Destination"] = base + WebDAVPath.escape(destination)
        headers["Overwrite"] = "F"
        let request = WebDAVRequest(method: "MOVE", path: source, headers: headers)
        let response = try await transport.send(request)
        guard (200..<300).contains(response.status) else { throw error(response, request) }
    }

    /// Makes the folder `path`.
    /// - Throws: ``WebDAVError`` (``WebDAVError/Code/notAllowed`` when something is already there,
    ///   ``WebDAVError/Code/parentMissing`` when its folder is gone).
    public func makeCollection(_ path: String) async throws {
        let request = WebDAVRequest(method: "MKCOL", path: path)
        let response = try await transport.send(request)
        guard response.status == 201 else { throw error(response, request) }
    }

    private func headers(for precondition: Precondition) -> [String: String] {
        switch precondition {
        case .none: [:]
        case .absent: ["If-None-Match": "*"]
        case .etag(let etag): ["If-Match": etag]
        }
    }

    private func error(_ response: WebDAVResponse, _ request: WebDAVRequest) -> WebDAVError {
        WebDAVError(status: response.status, method: request.method, path: request.path)
    }
}
