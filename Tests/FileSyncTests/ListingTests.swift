import FileSync
import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// How a sync learns what changed on the server, against Apache (whose `FileETag Digest` reads a file
/// for its ETag): listings without ETags, a file listed with the modification time and size cached taken
/// as unchanged once its description is settled (given in a later second), ETags looked up for the rest
/// and brought by downloads, and ``FolderSync/comparesETags`` to ask for them on every sync.
@Suite("FolderSync: listings without ETags, modification times settled by the second")
struct ListingTests {
    typealias RecordingTransport = TransfersTests.RecordingTransport

    /// A time a few seconds past midnight of 2026-01-01, and the same time as an HTTP date.
    static let planted = Date(timeIntervalSince1970: 1_767_225_605)
    static let plantedSecond = "Thu, 01 Jan 2026 00:00:05 GMT"
    static let secondAfter = "Thu, 01 Jan 2026 00:00:06 GMT"

    /// Writes `text` to the server's disk at `path`, modified at ``planted``.
    func plant(_ world: World, _ path: String, _ text: String) throws {
        try world.plant(path, text)
        try FileManager.default.setAttributes([.modificationDate: Self.planted], ofItemAtPath: world.serverRoot + "/" + path)
    }

    @Test("a second device's first download lists without ETags and takes each file's from its GET; the next sync sends no GET")
    func downloadWithoutETagListing() async throws {
        let world = try await World()
        try await world.direct.makeCollection("d")
        for index in 0..<6 { try await world.put("d/f\(index).txt", "file \(index)") }
        let recording = RecordingTransport(world.transport(), dated: TransfersTests.later)
        let tablet = try world.device("tablet", transport: recording)
        #expect(try await tablet.sync().downloaded.count == 6)
        #expect(recording.etagListings == 0, "\(recording.log)")
        #expect(!recording.log.contains { $0.hasPrefix("PROPFIND depth 0") }, "\(recording.log)")
        #expect(tablet.read("d/f5.txt") == "file 5")

        recording.clear()
        let again = try await tablet.sync()
        #expect(again.downloaded.isEmpty && again.uploaded.isEmpty)
        #expect(recording.log.allSatisfy { $0.hasPrefix("PROPFIND depth 1") }, "\(recording.log)")
        #expect(recording.etagListings == 0)

        // A change of size shows in the listing.
        try await world.put("d/f2.txt", "file 2, longer now")
        #expect(try await tablet.sync().downloaded == ["d/f2.txt"])
        #expect(tablet.read("d/f2.txt") == "file 2, longer now")
    }

    /// Takes the `ETag` out of every `GET` answer, as a server that sends none there would.
    struct NoETagOnGET: WebDAVTransport {
        let base: any WebDAVTransport
        var baseURL: URL { base.baseURL }

        func send(_ request: WebDAVRequest) async throws -> WebDAVResponse {
            var response = try await base.send(request)
            if request.method == "GET" { response.headers["etag"] = nil }
            return response
        }
    }

    @Test("a server whose GET answers carry no ETag: the files come down once, named by a look-up, and stay")
    func downloadWithoutETagInAnswer() async throws {
        let world = try await World()
        for index in 0..<5 { try await world.put("f\(index).txt", "file \(index)") }
        let recording = RecordingTransport(NoETagOnGET(base: world.transport()), dated: TransfersTests.later)
        let tablet = try world.device("tablet", transport: recording)
        #expect(try await tablet.sync().downloaded.count == 5)
        recording.clear()
        #expect(try await tablet.sync().downloaded.isEmpty)
        #expect(!recording.log.contains { $0.hasPrefix("GET") }, "\(recording.log)")
        #expect(recording.etagListings == 0, "\(recording.log)")
    }

    @Test("a file rewritten in the second its description was given, same size and time, is looked up and downloaded")
    func sameSecondRewriteIsLookedUp() async throws {
        let world = try await World()
        try plant(world, "a.txt", "1111")
        let recording = RecordingTransport(world.transport(), dated: Self.plantedSecond)
        let device = try world.device(transport: recording)
        #expect(try await device.sync().downloaded == ["a.txt"])

        try plant(world, "a.txt", "2222")
        recording.clear()
        #expect(try await device.sync().downloaded == ["a.txt"])
        #expect(device.read("a.txt") == "2222")
        #expect(recording.log.contains("PROPFIND depth 0 a.txt"), "\(recording.log)")

        // Seen again a second later, it is settled: no look-up.
        recording.date(Self.secondAfter)
        #expect(try await device.sync().downloaded.isEmpty)
        recording.clear()
        #expect(try await device.sync().downloaded.isEmpty)
        #expect(!recording.log.contains { $0.hasPrefix("PROPFIND depth 0") }, "\(recording.log)")
    }

    @Test("a settled file rewritten with an earlier time (a server whose clients set times): only comparesETags sees it")
    func comparesETagsSeesEarlierTimes() async throws {
        let world = try await World()
        try plant(world, "a.txt", "1111")
        let trusting = RecordingTransport(world.transport(), dated: Self.secondAfter)
        let comparing = RecordingTransport(world.transport(), dated: Self.secondAfter)
        let phone = try world.device("phone", transport: trusting)
        let folder = world.temporary.path("laptop")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let laptop = FolderSync(
            folder: folder, client: WebDAVClient(transport: comparing), store: MemoryStore(), account: "ada",
            device: "laptop", comparesETags: true)
        #expect(try await phone.sync().downloaded == ["a.txt"])
        #expect(try await laptop.sync().downloaded == ["a.txt"])

        try plant(world, "a.txt", "2222")
        #expect(try await phone.sync().downloaded.isEmpty)
        #expect(phone.read("a.txt") == "1111")
        comparing.clear()
        #expect(try await laptop.sync().downloaded == ["a.txt"])
        #expect(laptop.read("a.txt") == "2222")
        #expect(comparing.etagListings >= 1)
    }
}
