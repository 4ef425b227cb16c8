public import SyncCore
import Synchronization

/// A client middleware that counts round trips and bytes, in total and per
/// path, so a test can check that a sync took exactly the requests it should.
///
/// ```swift
/// let counter = CountingMiddleware()
/// let transport = LoopbackTransport(service: server, authenticator: auth).with(counter)
/// // … one fast sync over `transport` …
/// #expect(counter.total.requests == 1)
/// #expect(counter.counts(for: "/ota/sync").answerBytes < 2_048)
/// ```
///
/// Paths are counted without their query string.
public final class CountingMiddleware: SyncClientMiddleware, Sendable {
    /// Requests and bytes through the middleware.
    public struct Traffic: Sendable, Hashable {
        /// Requests sent: each one round trip.
        public var requests = 0
        /// Requests that got an answer (any status).
        public var answers = 0
        /// Requests that got no answer: the transport threw.
        public var failures = 0
        /// Body bytes of the requests sent.
        public var requestBytes = 0
        /// Body bytes of the answers received.
        public var answerBytes = 0

        /// Makes counts, all zero unless given.
        public init(requests: Int = 0, answers: Int = 0, failures: Int = 0, requestBytes: Int = 0, answerBytes: Int = 0)
        {
            self.requests = requests
            self.answers = answers
            self.failures = failures
            self.requestBytes = requestBytes
            self.answerBytes = answerBytes
        }
    }

    private struct State {
        var total = Traffic()
        var byPath: [String: Traffic] = [:]

        mutating func update(_ path: String, _ change: (inout Traffic) -> Void) {
            change(&total)
            change(&byPath[path, default: Traffic()])
        }
    }

    private let state = Mutex(State())

    /// Makes a middleware with every count at zero.
    public init() {}

    /// The counts over every path.
    public var total: Traffic { state.withLock { $0.total } }

    /// The counts by path (without query string).
    public var byPath: [String: Traffic] { state.withLock { $0.byPath } }

    /// The counts of one path (without query string); zero for a path never requested.
    public func counts(for path: String) -> Traffic { state.withLock { $0.byPath[path] ?? Traffic() } }

    /// Sets every count back to zero.
    public func reset() { state.withLock { $0 = State() } }

    /// Counts the request, forwards it, and counts its answer or failure.
    /// - Throws: what `next` throws.
    public func intercept(
        _ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        let path = String(request.pathWithoutQuery)
        state.withLock { state in
            state.update(path) { traffic in
                traffic.requests += 1
                traffic.requestBytes += request.body.count
            }
        }
        do {
            let response = try await next(request)
            state.withLock { state in
                state.update(path) { traffic in
                    traffic.answers += 1
                    traffic.answerBytes += response.body.count
                }
            }
            return response
        } catch {
            state.withLock { state in state.update(path) { $0.failures += 1 } }
            throw error
        }
    }
}
