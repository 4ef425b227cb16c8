#if canImport(CAnchorageXML2)
internal import CAnchorageXML2
#else
internal import libxml2
#endif
public import Foundation
import SyncCore

/// One item as a `PROPFIND` describes it.
public struct WebDAVItem: Sendable, Hashable {
    /// The item's path under the base URL (`""` for the base folder).
    public var path: String
    /// Whether it is a folder (a collection).
    public var isDirectory: Bool
    /// Its ETag, quotes included; `nil` for folders and servers without one.
    public var etag: String?
    /// The server's file id (`oc:fileid`), where it offers one.
    public var fileID: String?
    /// When it was last modified, by the server.
    public var modified: Date?
    /// Its size in bytes (files).
    public var size: Int64?
    /// When the server described it: the `Date` of the answer, when the server sent one.
    public var seen: Date?

    /// Makes an item.
    public init(
        path: String, isDirectory: Bool, etag: String? = nil, fileID: String? = nil, modified: Date? = nil,
        size: Int64? = nil, seen: Date? = nil
    ) {
        self.path = path
        self.isDirectory = isDirectory
        self.etag = etag
        self.fileID = fileID
        self.modified = modified
        self.size = size
        self.seen = seen
    }
}

/// Reads a `207 Multi-Status` answer to `PROPFIND` with libxml2.
///
/// Limits: the body at most ``maxBytes``, elements nested at most ``maxDepth``
/// deep; no network access, no entity expansion. Bad input fails with a
/// one-line ``WebDAVError`` (``WebDAVError/Code/badAnswer``).
public enum MultistatusParser {
    /// The largest body read.
    public static let maxBytes = 64 << 20
    /// The deepest nesting of elements accepted.
    public static let maxDepth = 64

    /// The items of a multistatus body whose hrefs lie under `basePath` (the
    /// base URL's path, e.g. `/dav/`), with paths relative to it.
    /// - Throws: ``WebDAVError`` for a body that is not a multistatus document.
    public static func items(in body: [UInt8], basePath: String) throws -> [WebDAVItem] {
        func failure(_ detail: String) -> WebDAVError {
            WebDAVError(.badAnswer, method: "PROPFIND", path: "", status: 207, detail: detail)
        }
        guard body.count <= maxBytes else { throw failure("the multistatus answer is larger than \(maxBytes) bytes") }
        guard !body.isEmpty else { throw failure("the multistatus answer is empty") }
        let options = Int32(
            bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
                | XML_PARSE_NOBLANKS.rawValue)
        let document = body.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                xmlReadMemory($0, Int32(buffer.count), "multistatus.xml", "utf-8", options)
            }
        }
        guard let document else {
            var detail = "the multistatus answer is not well-formed XML"
            if let error = xmlGetLastError(), let message = error.pointee.message {
                detail += ": line \(error.pointee.line): "
                    + String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            throw failure(detail)
        }
        defer { xmlFreeDoc(document) }
        guard let root = xmlDocGetRootElement(document), isDAV(root, "multistatus") else {
            throw failure("the answer is not a DAV:multistatus document")
        }
        if depth(of: root, limit: maxDepth) > maxDepth { throw failure("elements nest deeper than \(maxDepth)") }
        var base = basePath
        if !base.hasSuffix("/") { base += "/" }
        var items: [WebDAVItem] = []
        for response in children(root) where isDAV(response, "response") {
            guard let hrefNode = children(response).first(where: { isDAV($0, "href") }) else {
                throw failure("a response without an href")
            }
            var href = text(hrefNode)
            if let schemeEnd = href.range(of: "://"), let pathStart = href[schemeEnd.upperBound...].firstIndex(of: "/") {
                href = String(href[pathStart...])
            }
            guard let decoded = WebDAVPath.unescape(href) else { throw failure("a malformed href: \(href)") }
            var path: String
            if decoded + "/" == base || decoded == base {
                path = ""
            } else if decoded.hasPrefix(base) {
                path = String(decoded.dropFirst(base.count))
            } else {
                continue
            }
            while path.hasSuffix("/") { path.removeLast() }
            var item = WebDAVItem(path: path, isDirectory: false)
            for propstat in children(response) where isDAV(propstat, "propstat") {
                let status = children(propstat).first(where: { isDAV($0, "status") }).map(text) ?? ""
                guard status.contains(" 200 ") || status.hasSuffix(" 200") else { continue }
                for prop in children(propstat) where isDAV(prop, "prop") {
                    for property in children(prop) {
                        let name = localName(property)
                        let value = text(property).trimmingCharacters(in: .whitespacesAndNewlines)
                        switch (namespace(property), name) {
                        case ("DAV:", "resourcetype"):
                            item.isDirectory = children(property).contains { isDAV($0, "collection") }
                        case ("DAV:", "getetag"):
                            item.etag = value.isEmpty || value == "W/\"\"" ? nil : value
                        case ("DAV:", "getlastmodified"):
                            item.modified = HTTPDate.parse(value)
                        case ("DAV:", "getcontentlength"):
                            item.size = Int64(value)
                        case (_, "fileid"):
                            item.fileID = value.isEmpty ? nil : value
                        default:
                            break
                        }
                    }
                }
            }
            if item.isDirectory { item.etag = nil; item.size = nil }
            items.append(item)
        }
        return items
    }

    private static func children(_ node: xmlNodePtr) -> [xmlNodePtr] {
        var result: [xmlNodePtr] = []
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_ELEMENT_NODE { result.append(current) }
            child = current.pointee.next
        }
        return result
    }

    private static func depth(of node: xmlNodePtr, limit: Int) -> Int {
        var deepest = 1
        for child in children(node) {
            deepest = max(deepest, 1 + depth(of: child, limit: limit))
            if deepest > limit { break }
        }
        return deepest
    }

    private static func localName(_ node: xmlNodePtr) -> String {
        node.pointee.name.map { String(cString: $0) } ?? ""
    }

    private static func namespace(_ node: xmlNodePtr) -> String {
        node.pointee.ns?.pointee.href.map { String(cString: $0) } ?? ""
    }

    private static func isDAV(_ node: xmlNodePtr, _ name: String) -> Bool {
        localName(node) == name && namespace(node) == "DAV:"
    }

    private static func text(_ node: xmlNodePtr) -> String {
        guard let content = xmlNodeGetContent(node) else { return "" }
        defer { CAnchorageXML2_free(content) }
        return String(cString: content)
    }
}

/// HTTP dates (RFC 9110 IMF-fixdate): `Tue, 24 Nov 2026 17:10:19 GMT`.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date `text` names, or `nil` (also for a year outside 1 to 9999, or a day or time no clock shows).
    static func parse(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, let day = Int(parts[1]), (1...31).contains(day),
            let monthIndex = months.firstIndex(of: String(parts[2])), let year = Int64(parts[3]), CivilCalendar.headerYears.contains(year)
        else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, clock.allSatisfy({ (0...60).contains($0) }) else { return nil }
        let days = Int(CivilCalendar.days(year: year, month: Int64(monthIndex + 1), day: Int64(day)))
        return Date(timeIntervalSince1970: Double(days * 86400 + clock[0] * 3600 + clock[1] * 60 + clock[2]))
    }

    /// The IMF-fixdate of `date`; a date outside the years 1 to 9999 is written as the nearest end of them.
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970.isNaN ? 0 : date.timeIntervalSince1970.rounded(.down)
        let range = CivilCalendar.headerSeconds
        let seconds = Int(min(max(interval, Double(range.lowerBound)), Double(range.upperBound)))
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let rest = seconds - days * 86400
        let civil = CivilCalendar.date(fromDays: Int64(days))
        let (year, month, day) = (Int(civil.year), Int(civil.month), Int(civil.day))
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60)) GMT"
    }
}
