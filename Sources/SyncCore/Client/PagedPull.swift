import AsyncAlgorithms

/// A client's download of changes page by page, with the next page on its way
/// while the current one is written to the local store.
///
/// A page names where the next one starts (Aquasync's `latestUST`, appSync's
/// `servercounter`), so the request for it need not wait for the local write:
/// the server reads and encodes page N + 1 while the device decodes and
/// applies page N. A download of many pages then takes about as long as the
/// slower side alone instead of the sum of both.
///
/// ```swift
/// try await PagedPull.run(from: try await savedCursor()) { cursor in
///     let page = try await download(after: cursor)            // runs beside `apply`
///     return page.isEmpty ? nil : (page, page.hasMore ? page.last : nil)
/// } apply: { page in
///     try await store.transaction(for: account) { tx in … }   // also saves the page's cursor
/// }
/// ```
///
/// A client whose fetch only needs to read where the next page starts can
/// read the rest of the page in a third stage, `prepare`
/// (``run(from:fetch:prepare:apply:isolation:)``): page N + 1 is then
/// downloaded, page N read and page N - 1 applied at the same time.
///
/// Pages are prepared and applied one at a time and in order. When a stage
/// throws, the pages fetched or prepared meanwhile are dropped and the error
/// is thrown: the store holds every page applied before, and the saved cursor
/// says where the next download starts, so nothing is skipped or applied twice.
public enum PagedPull {
    /// Fetches pages from `start` and applies each, fetching the next one while
    /// the current one is applied.
    /// - Parameters:
    ///   - start: Where the first page starts.
    ///   - fetch: Downloads the page after a cursor: the page and where the next
    ///     one starts (`nil` after the last page), or `nil` when there is nothing
    ///     after the cursor.
    ///   - apply: Writes a page to the local store, with its cursor; it runs on the caller's actor and owns the page.
    ///   - isolation: The caller's actor, which `apply` runs on.
    /// - Throws: What `fetch` or `apply` throws; pages applied before stay applied.
    public static func run<Cursor: Sendable, Page: Sendable>(
        from start: Cursor,
        fetch: @escaping @Sendable (Cursor) async throws -> (page: Page, next: Cursor?)?,
        apply: (consuming Page) async throws -> Void,
        isolation: isolated (any Actor)? = #isolation
    ) async throws {
        // Not the three-stage run with nothing to prepare: that holds a third page (one waiting to be
        // applied), where this holds two, which matters for pages as large as an import's batches.
        try await withThrowingTaskGroup(of: (page: Page, next: Cursor?)?.self) { downloads in
            downloads.addTask { try await fetch(start) }
            while case let (page, next)?? = try await downloads.next() {
                if let next { downloads.addTask { try await fetch(next) } }
                // Handed over, so that `apply` may take the page apart without copying it.
                try await apply(consume page)
            }
        }
    }

    /// Fetches pages from `start`, prepares each and applies it: page N + 1 is fetched while page N
    /// is prepared and page N - 1 applied.
    /// - Parameters:
    ///   - start: Where the first page starts.
    ///   - fetch: Downloads the page after a cursor, as in ``run(from:fetch:apply:isolation:)``.
    ///   - prepare: Reads a fetched page into what `apply` writes (decoding it, say), beside the other stages.
    ///   - apply: Writes a prepared page to the local store, with its cursor; it runs on the caller's actor.
    ///   - isolation: The caller's actor, which `apply` runs on.
    /// - Throws: What a stage throws, or `CancellationError` when the task is cancelled; pages applied
    ///   before stay applied.
    public static func run<Cursor: Sendable, Page: Sendable, Prepared: Sendable>(
        from start: Cursor,
        fetch: @escaping @Sendable (Cursor) async throws -> (page: Page, next: Cursor?)?,
        prepare: @escaping @Sendable (consuming Page) async throws -> Prepared,
        apply: (consuming Prepared) async throws -> Void,
        isolation: isolated (any Actor)? = #isolation
    ) async throws {
        // A handoff, not a queue: a prepared page waits in `send` until the page before it is applied,
        // so at most one page is in each stage and one waits between preparing and applying: three
        // pages in hand while one is applied.
        let prepared = AsyncThrowingChannel<Prepared, any Error>()
        try await withThrowingTaskGroup(of: Void.self) { stages in
            stages.addTask {
                do {
                    var fetched = try await fetch(start)
                    while let (page, next) = fetched {
                        try Task.checkCancellation()
                        async let following = Self.fetch(after: next, with: fetch)
                        await prepared.send(try await prepare(page))
                        fetched = try await following
                    }
                    prepared.finish()
                } catch {
                    prepared.fail(error)
                }
            }
            for try await page in prepared { try await apply(page) }
            // The channel ends its iteration quietly when the task is cancelled: a pull cut short says so.
            try Task.checkCancellation()
        }
    }

    /// The page after `cursor`, or `nil` when there is no cursor (the page before was the last).
    private static func fetch<Cursor, Page>(
        after cursor: Cursor?, with fetch: @Sendable (Cursor) async throws -> (page: Page, next: Cursor?)?
    ) async throws -> (page: Page, next: Cursor?)? {
        guard let cursor else { return nil }
        return try await fetch(cursor)
    }
}
