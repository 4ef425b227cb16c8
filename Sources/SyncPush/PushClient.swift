#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import HTTPTypes
import HummingbirdWSClient
import Logging
public import NIOSSL
public import SyncCore
import SyncHTTP
import Synchronization

/// The device side of push: keeps a WebSocket to the push server, and syncs
/// each collection a notification names through the closure it was given.
///
/// ```swift
/// let push = PushClient(
///     server: URL(string: "http://127.0.0.1:8080")!, credentials: .basic(username: "ada", password: "secret"),
///     deviceToken: "phone-7", collections: ["aquasync/Contact", "appsync/booking"],
///     transport: transport, codec: JSONCodec()
/// ) { collection in
///     try await stacks.sync(collection)      // whichever stack owns the collection
/// }
/// try await push.run()                       // until cancelled
/// ```
///
/// Each connection registers first (`POST /push/register`), then opens
/// `GET /push/stream?deviceToken=…&after=SEQ` with the last `seq` received,
/// so after a reconnect the server replays what the device missed, or says
/// it cannot prove nothing was missed. A notification with a token syncs
/// that token's collection; one flagged `retained` (or with no token, or a
/// token the client does not know) syncs every monitored collection.
/// Collections the server answers in `poll` are synced every
/// `pollInterval` instead, and registered again then: once one has push, its
/// polling stops. Syncs run one at a time; notifications that arrive during
/// a sync are gathered, so a collection is synced once more, not once per
/// notification.
///
/// A lost stream, or a connection that fails, is tried again as
/// ``Configuration/reconnect`` (a ``SyncCore/RetryPolicy``) says, waiting on
/// ``Configuration/sleeper`` (a `TestClock` in tests), as long as the failure
/// may pass: whether to reconnect is decided by its class
/// (``SyncCore/SyncFailureClass``, ``PushError/failureClass``), never by its
/// text. A failure that will not pass — the server refuses the registration
/// (400, 404, 413: ``SyncCore/SyncClientError/Code/rejected``), the address
/// makes no stream address — ends ``run()`` with that error. Give the stacks' transports
/// a ``PushDeviceMiddleware`` with the same device token, so the server does
/// not notify this device of its own writes.
public final class PushClient: Sendable {
    /// Where the push server is, how to reconnect, and limits.
    public struct Configuration: Sendable {
        /// Where the push server is mounted (`/push` by default).
        public var basePath: String
        /// How the client reconnects after a lost stream or a failed connection whose failure may
        /// pass (``SyncCore/SyncFailureClass/retryLater``): the wait before reconnection number *n*
        /// in a row is ``SyncCore/RetryPolicy/jitteredDelay(beforeRetry:using:)`` of *n* (the count
        /// starts again once a stream opened); after ``SyncCore/RetryPolicy/maxAttempts`` failed
        /// connections in a row, or once ``SyncCore/RetryPolicy/maxElapsed`` would pass since the first
        /// of them, ``run()`` throws the last failure. ``defaultReconnect`` by default: never gives up.
        public var reconnect: RetryPolicy
        /// The clock reconnection waits and polling wait on.
        public var sleeper: any Clock<Duration>
        /// The clock reconnection waits and polling wait on.
        @available(*, deprecated, renamed: "sleeper")
        public var clock: any Clock<Duration> {
            get { sleeper }
            set { sleeper = newValue }
        }
        /// The TLS settings for a `https://` server (the system's trust roots by default).
        public var tls: TLSConfiguration?

        /// Makes a configuration.
        /// - Parameters:
        ///   - basePath: Where the push server is mounted.
        ///   - reconnect: How the client reconnects after a failure that may pass.
        ///   - sleeper: The clock reconnection waits and polling wait on.
        ///   - tls: The TLS settings for a `https://` server.
        public init(
            basePath: String = "/push", reconnect: RetryPolicy = defaultReconnect, sleeper: any Clock<Duration> = ContinuousClock(),
            tls: TLSConfiguration? = nil
        ) {
            self.basePath = basePath
            self.reconnect = reconnect
            self.sleeper = sleeper
            self.tls = tls
        }

        /// Makes a configuration whose waits are on `clock`.
        @available(*, deprecated, renamed: "init(basePath:reconnect:sleeper:tls:)")
        public init(
            basePath: String = "/push", reconnect: RetryPolicy = defaultReconnect, clock: any Clock<Duration>,
            tls: TLSConfiguration? = nil
        ) {
            self.init(basePath: basePath, reconnect: reconnect, sleeper: clock, tls: tls)
        }

        /// Reconnect for ever, after 250 ms doubling up to 30 s, each wait shortened by up to 20 %
        /// at random so that devices cut by the same outage do not all come back at once.
        public static let defaultReconnect = RetryPolicy(
            maxAttempts: .max, initialDelay: .milliseconds(250), multiplier: 2, maxDelay: .seconds(30), jitter: 0.2,
            maxElapsed: nil)
    }

    /// TLS settings that trust the certificate authorities in a PEM file instead of the system's.
    public static func tls(trustingPEMFile path: String) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(path)
        return tls
    }

    /// What the client did, for a log line or a test.
    public enum Event: Sendable, Hashable {
        /// Registered: the collections with push, and those polled.
        case registered(push: [CollectionID], poll: [CollectionID])
        /// The stream is open.
        case connected
        /// A notification arrived.
        case notified(PushNotification)
        /// A collection was synced, because of a notification, a retained one, polling, or the first connection.
        case synced(CollectionID, reason: Reason)
        /// Syncing a collection failed; it is synced again with the next notification or poll.
        case syncFailed(CollectionID, message: String)
        /// The stream closed or could not open; the client reconnects after `retryIn`.
        case disconnected(message: String, retryIn: Duration)
    }

    /// Why a collection was synced.
    public enum Reason: String, Sendable, Hashable {
        /// Its token's notification.
        case notified
        /// A retained notification, or one the server sent because it cannot prove nothing was missed.
        case resync
        /// The poll schedule.
        case poll
    }

    /// The push server's address (`http://…` or `https://…`).
    public let server: URL
    /// The credentials the stream presents.
    public let credentials: Credentials?
    /// The device's token.
    public let deviceToken: String
    /// The collections the device monitors.
    public let collections: [CollectionID]
    /// Where the server is mounted, reconnecting and the sleeper.
    public let configuration: Configuration
    private let endpoint: SyncEndpoint
    private let syncCollection: @Sendable (CollectionID) async throws -> Void
    private let state = Mutex(State())
    /// Test hook: treat retained notifications as ordinary ones (a client that would lose changes).
    package let ignoresRetainedForTesting = Atomic(false)
    private let (eventStream, eventContinuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(4_096))

    private struct State {
        var lastSeq: UInt64 = 0
        var collectionByToken: [String: CollectionID] = [:]
        var poll: Set<CollectionID> = []
        var pollInterval: Duration = .seconds(300)
        var pending: [CollectionID: Reason] = [:]
        var isRunning = false
        /// Wakes the sync loop of the current run.
        var wake: AsyncStream<Void>.Continuation?
        /// Tells the poll loop of the current run that a registration was answered.
        var registered: AsyncStream<Void>.Continuation?
    }

    /// Makes a client.
    /// - Parameters:
    ///   - server: The server's address; the stream is its `ws://` (or `wss://`) form.
    ///   - credentials: The credentials the stream presents (the transport adds its own for registering).
    ///   - deviceToken: The device's token (1–128 characters of `A–Z a–z 0–9 . _ : -`).
    ///   - collections: The collections the device monitors.
    ///   - transport: Carries the registration (with credentials).
    ///   - codec: The codec the registration travels in.
    ///   - configuration: Where the server is mounted, reconnecting and the sleeper.
    ///   - sync: Syncs one collection through whichever stack owns it.
    public init(
        server: URL, credentials: Credentials?, deviceToken: String, collections: [CollectionID],
        transport: any SyncClientTransport, codec: any SyncCodec, configuration: Configuration = Configuration(),
        sync: @escaping @Sendable (CollectionID) async throws -> Void
    ) {
        self.server = server
        self.credentials = credentials
        self.deviceToken = deviceToken
        self.collections = Array(Set(collections)).sorted()
        self.configuration = configuration
        self.endpoint = SyncEndpoint(transport: transport, codecs: CodecSet([codec]), retry: .none, sleeper: configuration.sleeper)
        self.syncCollection = sync
    }

    /// What the client does from now on: one stream for the client's life.
    public var events: AsyncStream<Event> { eventStream }

    /// The last notification number received.
    public var lastSeq: UInt64 { state.withLock { $0.lastSeq } }

    /// The token the server gave each collection with push at the last registration.
    public var tokens: [CollectionID: String] {
        state.withLock { state in Dictionary(state.collectionByToken.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first }) }
    }

    /// The collections polled now.
    public var polled: Set<CollectionID> { state.withLock { $0.poll } }

    /// Keeps the stream open, syncs what notifications name, and polls, until cancelled or until a
    /// connection fails for a reason that will not pass.
    /// - Throws: ``PushError`` (``PushError/Code/alreadyRunning``) when the client already runs;
    ///   `CancellationError` when cancelled; the failure that ended the connecting: one that will not
    ///   pass (a ``SyncCore/SyncClientError`` for a refused registration, a ``PushError``), or the last
    ///   of the failed connections ``Configuration/reconnect`` allows in a row.
    public func run() async throws {
        let started = state.withLock { state in
            defer { state.isRunning = true }
            return !state.isRunning
        }
        guard started else { throw PushError(.alreadyRunning, "this push client already runs") }
        let (wake, wakeContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (registered, registeredContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        state.withLock { state in
            state.wake = wakeContinuation
            state.registered = registeredContinuation
        }
        defer {
            state.withLock { state in
                state.isRunning = false
                state.wake = nil
                state.registered = nil
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.syncLoop(wake) }
            group.addTask { await self.pollLoop(registered) }
            group.addTask { try await self.connectionLoop() }
            try await group.next()
            group.cancelAll()
        }
        try Task.checkCancellation()
    }

    // MARK: Connection

    /// Registers and opens the stream, again and again, as ``Configuration/reconnect`` says, until
    /// cancelled.
    /// - Throws: a failure that will not pass, or the last failure ``Configuration/reconnect`` allows.
    private func connectionLoop() async throws {
        let policy = configuration.reconnect
        var random = SystemRandomNumberGenerator()
        // Connections in a row that did not open a stream, and the time since the first of them ended.
        var failures = 0
        var since: (() -> Duration)?
        while !Task.isCancelled {
            let failure: (any Error)?
            do {
                try await register()
                if try await openStream() {
                    failures = 0
                    since = nil
                }
                failure = nil
            } catch is CancellationError {
                return
            } catch {
                failure = error
            }
            if Task.isCancelled { return }
            if since == nil { since = RetryPolicy.stopwatch(on: configuration.sleeper) }
            failures += 1
            let wait = policy.jitteredDelay(beforeRetry: failures, using: &random)
            if let failure {
                // Whether to connect again is the failure's class, never its text.
                guard Self.failureClass(of: failure) == .retryLater else { throw failure }
                guard failures < policy.maxAttempts else { throw failure }
                if let budget = policy.maxElapsed, let since, since() + wait > budget { throw failure }
            }
            eventContinuation.yield(.disconnected(message: failure.map { "\($0)" } ?? "the server closed the stream", retryIn: wait))
            do {
                try await configuration.sleeper.sleep(for: wait)
            } catch {
                return
            }
        }
    }

    /// The journal's class of a failure to connect: a ``PushError``'s own, or what
    /// ``SyncCore/SyncFailureClass/init(of:)`` makes of a registration's ``SyncCore/SyncClientError``
    /// (a WebSocket that fails or closes is retry later).
    static func failureClass(of error: any Error) -> SyncFailureClass {
        (error as? PushError)?.failureClass ?? SyncFailureClass(of: error)
    }

    /// Registers the monitored collections and takes the answer's tokens and polled collections.
    private func register() async throws {
        let request = try endpoint.request(
            .post, configuration.basePath + "/register", body: PushRegistration(deviceToken: deviceToken, collections: collections))
        let answer = try await endpoint.send(request, idempotent: true, as: PushRegistrationAnswer.self)
        let push = answer.tokens.keys.map { CollectionID($0) }.sorted()
        state.withLock { state in
            state.collectionByToken = Dictionary(answer.tokens.map { ($0.value, CollectionID($0.key)) }, uniquingKeysWith: { first, _ in first })
            state.poll = Set(answer.poll).intersection(collections)
            state.pollInterval = .seconds(max(1, answer.pollInterval))
        }
        eventContinuation.yield(.registered(push: push, poll: answer.poll.sorted()))
        _ = state.withLock { $0.registered }?.yield()
    }

    /// Opens the stream and handles its notifications until it closes.
    /// - Returns: Whether the stream opened.
    private func openStream() async throws -> Bool {
        let after = lastSeq
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)
        let secure = components?.scheme?.lowercased() == "https"
        components?.scheme = secure ? "wss" : "ws"
        var path = components?.path ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        components?.path = path + configuration.basePath + "/stream"
        components?.percentEncodedQuery = "deviceToken=\(PercentEncoding.encode(deviceToken))&after=\(after)"
        guard let url = components?.string else { throw PushError(.invalidServer, "\(server) does not make a push stream address") }
        var headers = HTTPFields()
        if let credentials { headers[.authorization] = AuthorizationHeader.value(for: credentials) }
        let opened = Atomic(false)
        var logger = Logger(label: "anchorage.push-client")
        logger.logLevel = .critical
        try await WebSocketClient.connect(
            url: url, configuration: .init(maxFrameSize: 4_096, additionalHeaders: headers, autoPing: .enabled(timePeriod: .seconds(30))),
            tlsConfiguration: secure ? (configuration.tls ?? .makeClientConfiguration()) : nil, logger: logger
        ) { inbound, _, _ in
            opened.store(true, ordering: .relaxed)
            self.eventContinuation.yield(.connected)
            var messages = inbound.messages(maxSize: 4_096).makeAsyncIterator()
            while let message = try await messages.next() {
                guard case .text(let text) = message else { continue }
                self.receive(try PushNotification(json: text))
            }
        }
        return opened.load(ordering: .relaxed)
    }

    /// Takes a notification: remembers its number and gathers what to sync.
    func receive(_ notification: PushNotification) {
        let ignoresRetained = ignoresRetainedForTesting.load(ordering: .relaxed)
        let isNew = state.withLock { state -> Bool in
            guard notification.seq > state.lastSeq else { return false }
            state.lastSeq = notification.seq
            if !notification.retained || ignoresRetained, let token = notification.token, let collection = state.collectionByToken[token] {
                if state.pending[collection] == nil { state.pending[collection] = .notified }
            } else if ignoresRetained {
                // The control client: a retained notification without a token syncs nothing.
            } else {
                for collection in collections { state.pending[collection] = .resync }
            }
            return true
        }
        guard isNew else { return }
        eventContinuation.yield(.notified(notification))
        wakeSyncLoop()
    }

    // MARK: Syncing

    private func wakeSyncLoop() {
        _ = state.withLock { $0.wake }?.yield()
    }

    private func syncLoop(_ wake: AsyncStream<Void>) async {
        for await _ in wake {
            while let (collection, reason) = nextPending() {
                if Task.isCancelled { return }
                do {
                    try await syncCollection(collection)
                    eventContinuation.yield(.synced(collection, reason: reason))
                } catch is CancellationError {
                    return
                } catch {
                    eventContinuation.yield(.syncFailed(collection, message: "\(error)"))
                }
            }
        }
    }

    private func nextPending() -> (CollectionID, Reason)? {
        state.withLock { state in
            guard let collection = state.pending.keys.min() else { return nil }
            return (collection, state.pending.removeValue(forKey: collection)!)
        }
    }

    // MARK: Polling

    private func pollLoop(_ registered: AsyncStream<Void>) async {
        for await _ in registered { break }  // the first answer says what to poll, and how often
        while !Task.isCancelled {
            let interval = state.withLock { $0.pollInterval }
            do {
                try await configuration.sleeper.sleep(for: interval)
            } catch {
                return
            }
            // Ask again: a collection that has push now leaves the poll list.
            try? await register()
            let due = state.withLock { state in
                for collection in state.poll where state.pending[collection] == nil { state.pending[collection] = .poll }
                return !state.poll.isEmpty
            }
            if due { wakeSyncLoop() }
        }
    }
}
