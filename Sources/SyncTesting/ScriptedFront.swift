public import SyncCore
import Synchronization

/// A service middleware that stands in front of a real server in a test:
/// it answers the first requests from a script instead of letting them
/// through, can keep each request that does go through inside the server for
/// a while on a ``TestClock``, and notes every request that arrives, when,
/// and how many were inside at once.
///
/// ```swift
/// let clock = TestClock()
/// let front = ScriptedFront(answering: [.text("busy", status: 503), .text("busy", status: 503)], sleeper: clock)
/// let transport = LoopbackTransport(service: server.with(front), authenticator: authenticator)
/// let sync = Task { try await client.sync() }
/// await clock.waitForSleepers(1)          // the client waits before its first retry
/// clock.advance(by: .seconds(1))
/// …
/// #expect(front.requests.map(\.arrival) == [.zero, .seconds(1), .seconds(3)])
/// ```
///
/// Testing retries, `Retry-After`, or that a client sends one request at a
/// time (``mostInFlight`` with `holdFor`) are its uses.
public final class ScriptedFront: SyncServiceMiddleware {
    /// A request as it arrived.
    public struct ArrivedRequest: Sendable {
        /// Its method.
        public var method: SyncRequest.Method
        /// Its path, without the query.
        public var path: String
        /// Its body.
        public var body: [UInt8]
        /// When it arrived, as time since the ``TestClock`` was made.
        public var arrival: Duration
    }

    private struct State {
        var script: [SyncResponse]
        var requests: [ArrivedRequest] = []
        var inFlight = 0
        var mostInFlight = 0
    }

    private let state: Mutex<State>
    private let sleeper: TestClock
    private let holdFor: Duration?

    /// Makes a front.
    /// - Parameters:
    ///   - script: Answered, in order, to the first requests instead of letting them through.
    ///   - sleeper: Arrivals are noted on it, and `holdFor` is slept on it.
    ///   - holdFor: How long each request that goes through stays inside the server, on `sleeper`
    ///     (`nil`: no wait).
    public init(answering script: [SyncResponse] = [], sleeper: TestClock, holdFor: Duration? = nil) {
        self.state = Mutex(State(script: script))
        self.sleeper = sleeper
        self.holdFor = holdFor
    }

    /// Makes a front that notes arrivals and holds requests on `clock`.
    @available(*, deprecated, renamed: "init(answering:sleeper:holdFor:)")
    public convenience init(answering script: [SyncResponse] = [], clock: TestClock, holdFor: Duration? = nil) {
        self.init(answering: script, sleeper: clock, holdFor: holdFor)
    }

    /// Every request that arrived, scripted or let through, in order.
    public var requests: [ArrivedRequest] { state.withLock { $0.requests } }

    /// The most requests that were inside at the same time.
    public var mostInFlight: Int { state.withLock { $0.mostInFlight } }

    /// Notes the request, then answers it from the script or lets it through.
    public func intercept(
        _ request: SyncRequest, context: ServiceContext,
        next: @Sendable (SyncRequest, ServiceContext) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        let arrival = sleeper.now.offset
        let scripted = state.withLock { state -> SyncResponse? in
            state.requests.append(
                ArrivedRequest(method: request.method, path: String(request.pathWithoutQuery), body: request.body, arrival: arrival))
            state.inFlight += 1
            state.mostInFlight = max(state.mostInFlight, state.inFlight)
            return state.script.isEmpty ? nil : state.script.removeFirst()
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        if let scripted { return scripted }
        if let holdFor { try await sleeper.sleep(for: holdFor) }
        return try await next(request, context)
    }
}
