import FileSync
import Foundation
import SyncCore
import TestSupport
import Testing

@Suite("WebDAVClient against Apache mod_dav")
struct WebDAVClientTests {
    @Test("PUT with If-None-Match, PROPFIND depth 0 and 1, GET, PUT with If-Match, MOVE, DELETE, MKCOL")
    func everyMethod() async throws {
        let world = try await World()
        let client = world.direct
        let file = world.temporary.path("a.txt")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: file))

        try await client.upload(from: file, to: "a b.txt", precondition: .absent)
        await #expect(throws: WebDAVError.self) { try await client.upload(from: file, to: "a b.txt", precondition: .absent) }
        let item = try #require(try await client.item(at: "a b.txt"))
        #expect(item.size == 5 && !item.isDirectory && item.etag != nil && item.modified != nil)

        try await client.makeCollection("d")
        let listing = try await client.contents(of: "")
        #expect(Set(listing.map(\.path)) == ["", "a b.txt", "d"])
        #expect(listing.first { $0.path == "d" }?.isDirectory == true)

        let copy = world.temporary.path("copy.txt")
        let etag = try await client.download("a b.txt", to: copy)
        #expect(try String(contentsOfFile: copy, encoding: .utf8) == "hello")
        #expect(etag == item.etag)

        try Data("changed".utf8).write(to: URL(fileURLWithPath: file))
        try await client.upload(from: file, to: "a b.txt", precondition: .etag(item.etag!))
        let stale = await #expect(throws: WebDAVError.self) {
            try await client.upload(from: file, to: "a b.txt", precondition: .etag(item.etag!))
        }
        #expect(stale?.code == .changedOnServer && stale?.failureClass == .conflict)

        let changed = try #require(try await client.item(at: "a b.txt"))
        await #expect(throws: WebDAVError.self) { try await client.move("a b.txt", to: "d/b.txt", precondition: .etag(item.etag!)) }
        try await client.move("a b.txt", to: "d/b.txt", precondition: .etag(changed.etag!))
        #expect(try await client.item(at: "a b.txt") == nil)
        #expect(try await client.item(at: "d/b.txt")?.etag == changed.etag)

        await #expect(throws: WebDAVError.self) { try await client.delete("d/b.txt", precondition: .etag(item.etag!)) }
        try await client.delete("d/b.txt", precondition: .etag(changed.etag!))
        #expect(try await client.item(at: "d/b.txt") == nil)
    }

    @Test("The server's refusals map to the journal's classes")
    func statusMapping() async throws {
        let world = try await World()
        let client = world.direct
        let file = world.temporary.path("x")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        func kind(_ body: () async throws -> Void) async -> WebDAVError? {
            do { try await body() } catch let error as WebDAVError { return error } catch { return nil }
            return nil
        }
        let missing = await kind { try await client.upload(from: file, to: "gone/x", precondition: .absent) }
        #expect(missing?.code == .parentMissing && missing?.status == 409)
        let exists = await kind { try await client.makeCollection("") }
        #expect(exists?.code == .notAllowed && exists?.failureClass == .refused)
        let notFound = await kind { try await client.delete("nothing") }
        #expect(notFound?.code == .notFound)
        for (status, expected, failureClass) in [
            (403, WebDAVError.Code.notAllowed, SyncFailureClass.refused), (423, .locked, .retryLater),
            (500, .serverError, .retryLater), (503, .serverError, .retryLater), (507, .serverFull, .retryLater),
        ] {
            let error = await kind { try await client.upload(from: file, to: ".anchorage-status-\(status)", precondition: .none) }
            #expect(error?.code == expected && error?.status == status && error?.failureClass == failureClass)
        }
        let offline = WebDAVClient(transport: WebDAVHTTPTransport(baseURL: URL(string: "http://127.0.0.1:1/dav/")!, timeout: .seconds(1)))
        let noAnswer = await kind { _ = try await offline.item(at: "x") }
        #expect(noAnswer?.code == .noAnswer && noAnswer?.failureClass == .retryLater)
    }

    @Test("Multistatus: namespaces, escaped hrefs, file ids; bad input is a one-line error")
    func multistatus() throws {
        let body = """
            <?xml version="1.0"?>
            <d:multistatus xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
            <d:response><d:href>/remote/files/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype>
            </d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
            <d:response><d:href>http://host/remote/files/My%20Notes/a%C3%A9.txt</d:href><d:propstat><d:prop>
            <d:resourcetype/><d:getetag>"abc"</d:getetag><d:getcontentlength>12</d:getcontentlength>
            <d:getlastmodified>Tue, 24 Nov 2026 17:10:19 GMT</d:getlastmodified><oc:fileid>00042</oc:fileid>
            </d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>
            <d:propstat><d:prop><d:quota/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>
            </d:multistatus>
            """
        let items = try MultistatusParser.items(in: Array(body.utf8), basePath: "/remote/files/")
        #expect(items.count == 2)
        #expect(items[0] == WebDAVItem(path: "", isDirectory: true))
        #expect(items[1].path == "My Notes/aé.txt" && items[1].etag == "\"abc\"" && items[1].size == 12 && items[1].fileID == "00042")
        #expect(items[1].modified == Date(timeIntervalSince1970: 1_795_540_219))

        // Dates no calendar shows are no dates, not a crash.
        for date in ["Tue, 24 Nov 9223372036854775807 17:10:19 GMT", "Tue, 99 Nov 2026 17:10:19 GMT", "Tue, 24 Nov 2026 17:99:19 GMT"] {
            let odd = body.replacingOccurrences(of: "Tue, 24 Nov 2026 17:10:19 GMT", with: date)
            #expect(try MultistatusParser.items(in: Array(odd.utf8), basePath: "/remote/files/")[1].modified == nil, "\(date)")
        }

        for bad in ["", "<d:multistatus xmlns:d=\"DAV:\">", "<html/>", "<?xml version=\"1.0\"?><a>&undefined;</a>",
                    String(repeating: "<d:multistatus xmlns:d=\"DAV:\">", count: 100) + String(repeating: "</d:multistatus>", count: 100)] {
            let error = #expect(throws: WebDAVError.self) { try MultistatusParser.items(in: Array(bad.utf8), basePath: "/") }
            #expect(error?.code == .badAnswer)
            #expect(error.map { !String(describing: $0).contains("\n") } == true)
        }
    }
}
