/// Runs `body`, then `cleanUp`, also when `body` throws; `body`'s error wins over `cleanUp`'s.
///
/// For clients a test must shut down whatever happens: an AsyncHTTPClient `HTTPClient` that is
/// released without `shutdown()` traps in its deinit (in debug builds), taking the whole test run with it.
///
/// ```swift
/// let answer = try await finally { try await transport.send(ping) } then: { try await transport.shutdown() }
/// ```
public func finally<Result>(
    _ body: () async throws -> Result, then cleanUp: () async throws -> Void
) async throws -> Result {
    let result: Result
    do {
        result = try await body()
    } catch {
        try? await cleanUp()
        throw error
    }
    try await cleanUp()
    return result
}
