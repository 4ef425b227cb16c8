import SyncCore
import SyncTesting
import Synchronization
import Testing

@Suite("Paged pull: the next page downloads while the current one is applied")
struct PagedPullTests {
    /// The fetches made, in order.
    final class FetchLog: Sendable {
        let fetches = Mutex<[String]>([])
        func contains(_ fetch: String) -> Bool { fetches.withLock { $0.contains(fetch) } }
    }

    /// Pages a, b, c after cursors 0, 1 and 2; the fetch of each is logged.
    static func pages(_ log: FetchLog) -> @Sendable (Int) async throws -> (page: String, next: Int?)? {
        { cursor in
            log.fetches.withLock { $0.append("fetch \(cursor)") }
            let pages = ["a", "b", "c"]
            return (pages[cursor], cursor + 1 < pages.count ? cursor + 1 : nil)
        }
    }

    @Test("page N + 1 is fetched before page N is applied to the end, and pages are applied in order")
    func nextPageIsFetchedDuringTheApply() async throws {
        let log = FetchLog()
        var applied: [String] = []
        try await PagedPull.run(from: 0, fetch: Self.pages(log)) { (page: String) in
            // Waits, while applying this page, until the next one's fetch has started (not for the last page).
            if page != "c" {
                let next = page == "a" ? "fetch 1" : "fetch 2"
                #expect(await yieldUntil { log.contains(next) }, "\(next) did not start while \(page) was applied")
            }
            applied.append(page)
        }
        #expect(applied == ["a", "b", "c"])
        #expect(log.fetches.withLock { $0 } == ["fetch 0", "fetch 1", "fetch 2"])
    }

    @Test("an apply that throws stops the pull: the error comes out, and no later page is applied")
    func failedApplyStops() async throws {
        struct DiskFull: Error {}
        var applied: [String] = []
        await #expect(throws: DiskFull.self) {
            try await PagedPull.run(from: 0, fetch: Self.pages(FetchLog())) { (page: String) in
                if page == "b" { throw DiskFull() }
                applied.append(page)
            }
        }
        #expect(applied == ["a"])
    }

    @Test("nothing after the cursor: nothing is applied")
    func nothingToPull() async throws {
        var applied = 0
        try await PagedPull.run(from: 7, fetch: { (_: Int) -> (page: String, next: Int?)? in nil }) { _ in applied += 1 }
        #expect(applied == 0)
    }
}
