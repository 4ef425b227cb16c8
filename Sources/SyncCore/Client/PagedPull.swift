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
/// Pages are applied one at a time and in order. When `apply` throws, the
/// page fetched meanwhile is dropped and the error is thrown: the store holds
/// every page applied before, and the saved cursor says where the next
/// download starts, so nothing is skipped or applied twice.
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
        try await withThrowingTaskGroup(of: (page: Page, next: Cursor?)?.self) { downloads in
            downloads.addTask { try await fetch(start) }
            while case let (page, next)?? = try await downloads.next() {
                if let next { downloads.addTask { try await fetch(next) } }
                // Handed over, so that `apply` may take the page apart without copying it.
                try await apply(consume page)
            }
        }
    }
}
