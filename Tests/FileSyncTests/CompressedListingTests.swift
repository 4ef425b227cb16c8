import FileSync
import Foundation
import SyncCore
import SyncHTTPServer
import SyncTesting
import TestSupport
import Testing

/// A WebDAV server that compresses its listings: the transport asks for it and reads them decoded.
@Suite("WebDAV: a compressed listing")
struct CompressedListingTests {
    /// Answers every PROPFIND with a multistatus of the folder `/dav/` and 30 files in it.
    struct ListingService: SyncService {
        func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
            let file = { (name: String) in
                "<d:response><d:href>/dav/\(name)</d:href><d:propstat><d:prop><d:resourcetype/><d:getcontentlength>1</d:getcontentlength>"
                    + "<d:getetag>\"etag-\(name)\"</d:getetag></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
            }
            let folder =
                "<d:response><d:href>/dav/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop>"
                + "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
            let xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><d:multistatus xmlns:d=\"DAV:\">" + folder
                + (0..<30).map { file("file-\($0).txt") }.joined() + "</d:multistatus>"
            return SyncResponse(status: 207, contentType: "text/xml; charset=utf-8", body: Array(xml.utf8))
        }
    }

    @Test("the listing comes gzip-compressed (the transport asks) and reads back whole")
    func listing() async throws {
        try await HTTPSyncServer.withRunningServer(service: ListingService(), authenticator: TransportRoute.defaultAuthenticator) { baseURL in
            let transport = WebDAVHTTPTransport(baseURL: baseURL.appendingPathComponent("dav/"), username: "ada", password: "secret")
            let answer = try await transport.send(
                WebDAVRequest(method: "PROPFIND", path: "", headers: ["Depth": "1"], destination: .memory(limit: 1 << 20)))
            #expect(answer.status == 207)
            #expect(answer.headers["content-encoding"] == nil, "decoded, and the coding taken off")
            #expect(String(decoding: answer.body, as: UTF8.self).hasPrefix("<?xml"))
            let listing = try await WebDAVClient(transport: transport).contents(of: "")
            #expect(listing.count == 31)
            #expect(listing.contains { $0.path == "file-29.txt" && $0.etag == "\"etag-file-29.txt\"" })
        }
    }
}
