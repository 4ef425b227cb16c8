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

    @Test("with a prepare stage, page N + 1 is fetched and page N prepared while page N - 1 is applied, all in order")
    func threeStages() async throws {
        let log = FetchLog()
        var applied: [String] = []
        try await PagedPull.run(from: 0, fetch: Self.pages(log)) { (page: String) in
            log.fetches.withLock { $0.append("prepare \(page)") }
            return page.uppercased()
        } apply: { (page: String) in
            // While A is applied, B is prepared and c fetched (the fetch log shows both before A's apply ends).
            if page == "A" {
                #expect(await yieldUntil { log.contains("prepare b") && log.contains("fetch 2") }, "b was not prepared or c not fetched while A was applied")
            }
            applied.append(page)
        }
        #expect(applied == ["A", "B", "C"])
        let fetches = log.fetches.withLock { $0 }
        #expect(fetches.filter { $0.hasPrefix("fetch") } == ["fetch 0", "fetch 1", "fetch 2"])
        #expect(fetches.filter { $0.hasPrefix("prepare") } == ["prepare a", "prepare b", "prepare c"])
    }

    @Test("a prepare that throws stops the pull after the pages before it are applied")
    func failedPrepareStops() async throws {
        struct Unreadable: Error {}
        var applied: [String] = []
        await #expect(throws: Unreadable.self) {
            try await PagedPull.run(from: 0, fetch: Self.pages(FetchLog())) { (page: String) in
                if page == "c" { throw Unreadable() }
                return page
            } apply: { (page: String) in
                applied.append(page)
            }
        }
        #expect(applied.allSatisfy { ["a", "b"].contains($0) } && !applied.contains("c"))
    }

    @Test("a three-stage pull whose task is cancelled stops with CancellationError, the pages applied before kept")
    func cancelledThreeStages() async throws {
        let endless: @Sendable (Int) async throws -> (page: Int, next: Int?)? = { cursor in (cursor, cursor + 1) }
        let pull = Task {
            var applied: [Int] = []
            do {
                try await PagedPull.run(from: 0, fetch: endless) { (page: Int) in page } apply: { (page: Int) in
                    applied.append(page)
                    if page == 2 { withUnsafeCurrentTask { $0?.cancel() } }
                }
                return (applied, nil as (any Error)?)
            } catch {
                return (applied, error)
            }
        }
        let (applied, error) = await pull.value
        #expect(error is CancellationError, "the pull ended with \(String(describing: error))")
        #expect(applied.starts(with: [0, 1, 2]) && applied == Array(0..<applied.count), "applied \(applied)")
    }
}
