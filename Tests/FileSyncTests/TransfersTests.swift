import FileSync
import Foundation
import SyncCore
import SyncTesting
import Synchronization
import Testing

/// A sync's transfers, against Apache: several in flight (``FolderSync/transfers``), an upload with no
/// look-up before it (its precondition is the look-up), the new ETags from one listing per folder.
@Suite("FolderSync: transfers in flight, no look-up before an upload")
struct TransfersTests {
    /// Records every request; holds `PUT`s and `GET`s until `gather` of them wait, then lets them all go.
    /// With `dated`, every answer's `Date` says that instead of the server's time.
    final class RecordingTransport: WebDAVTransport {
        let base: any WebDAVTransport
        let gather: Int
        private let state = Mutex(
            (log: [String](), etagListings: 0, inFlight: 0, most: 0, dated: String?.none,
             waiting: [CheckedContinuation<Void, Never>]()))
        var baseURL: URL { base.baseURL }

        init(_ base: any WebDAVTransport, gather: Int = 1, dated: String? = nil) {
            self.base = base
            self.gather = gather
            state.withLock { $0.dated = dated }
        }

        var log: [String] { state.withLock { $0.log } }
        var mostInFlight: Int { state.withLock { $0.most } }
        /// How many `PROPFIND`s asked for ETags.
        var etagListings: Int { state.withLock { $0.etagListings } }

        /// Forgets the requests recorded so far.
        func clear() { state.withLock { $0.log = []; $0.etagListings = 0 } }

        /// From now on, every answer's `Date` says `date` (an HTTP date), or the server's time when `nil`.
        func date(_ date: String?) { state.withLock { $0.dated = date } }

        /// Lets every held request go (when fewer than `gather` are left).
        func releaseAll() {
            for continuation in state.withLock({ state in defer { state.waiting = [] }; return state.waiting }) {
                continuation.resume()
            }
        }

        func send(_ request: WebDAVRequest) async throws -> WebDAVResponse {
            let transfer = request.method == "PUT" || request.method == "GET"
            state.withLock { state in
                state.log.append("\(request.method) \(request.headers["Depth"].map { "depth \($0) " } ?? "")\(request.path)")
                if case .bytes(let body) = request.body, String(decoding: body, as: UTF8.self).contains("getetag") {
                    state.etagListings += 1
                }
                if transfer {
                    state.inFlight += 1
                    state.most = max(state.most, state.inFlight)
                }
            }
            defer { if transfer { state.withLock { $0.inFlight -= 1 } } }
            if transfer && gather > 1 {
                await withCheckedContinuation { continuation in
                    let all = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                        state.waiting.append(continuation)
                        guard state.waiting.count >= gather else { return nil }
                        defer { state.waiting = [] }
                        return state.waiting
                    }
                    for waiting in all ?? [] { waiting.resume() }
                }
            }
            var response = try await base.send(request)
            if let dated = state.withLock({ $0.dated }) { response.headers["date"] = dated }
            return response
        }
    }

    @Test("eight new files with transfers: 4 go up four at a time, and so do their downloads on another device")
    func fourAtATime() async throws {
        let world = try await World()
        let uploads = RecordingTransport(world.transport(), gather: 4)
        let phone = try world.device("phone", transport: uploads)
        let sync = FolderSync(folder: phone.folder, client: phone.client, store: phone.store, account: "ada", transfers: 4)
        for index in 0..<8 { try phone.write("f\(index).txt", "file \(index)") }
        let uploading = Task { try await sync.sync() }
        let gathered = await yieldUntil(maxYields: 5_000_000) { uploads.mostInFlight == 4 }
        uploads.releaseAll()  // a sync that sent one at a time would wait here for ever
        #expect(gathered)
        #expect(try await uploading.value.uploaded.count == 8)
        #expect(uploads.mostInFlight == 4)

        let downloads = RecordingTransport(world.transport(), gather: 4)
        let tablet = try world.device("tablet", transport: downloads)
        let second = FolderSync(folder: tablet.folder, client: tablet.client, store: tablet.store, account: "ada", transfers: 4)
        let downloading = Task { try await second.sync() }
        let gatheredDownloads = await yieldUntil(maxYields: 5_000_000) { downloads.mostInFlight == 4 }
        downloads.releaseAll()
        #expect(gatheredDownloads)
        #expect(try await downloading.value.downloaded.count == 8)
        #expect(second.read("f7.txt") == "file 7")
    }

    @Test("new files go up with If-None-Match and no look-up; their ETags come from one listing of their folder")
    func noLookUpBeforeUpload() async throws {
        let world = try await World()
        // Answers dated well after the files were written: what a listing shows is settled.
        let recording = RecordingTransport(world.transport(), dated: Self.later)
        let device = try world.device(transport: recording)
        for index in 0..<6 { try device.write("f\(index).txt", "file \(index)") }
        let report = try await device.sync()
        #expect(report.uploaded.count == 6)
        let log = recording.log
        #expect(log.filter { $0.hasPrefix("PUT ") }.count == 6)
        #expect(!log.contains { $0.hasPrefix("PROPFIND depth 0 f") }, "\(log)")
        // One listing for the ETags, one (without them) for the server's changes.
        #expect(log.filter { $0 == "PROPFIND depth 1 " }.count == 2, "\(log)")
        #expect(recording.etagListings == 1)
        #expect(try await device.sync().uploaded.isEmpty)
        #expect(try await world.get("f5.txt") == "file 5")
    }

    /// An HTTP date later than any file of a test is written.
    static let later = "Fri, 01 Jan 2100 00:00:00 GMT"

    @Test("a new file the server already holds the same: the If-None-Match refusal leads to the look, which settles it")
    func sameFileOnBothSides() async throws {
        let world = try await World()
        try await world.put("a.txt", "same")
        let device = try world.device()
        try device.write("a.txt", "same")
        let report = try await device.sync()
        #expect(report.questions.isEmpty && report.uploaded.isEmpty)
        #expect(try await device.pending().isEmpty)
    }
}
