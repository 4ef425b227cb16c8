public import Logging
public import ServiceLifecycle
public import SyncCore
import Synchronization

/// The push server: devices register the collections they monitor, get one
/// token per collection, and hear on a WebSocket (`GET /push/stream`) when
/// another device's commit changes one of them.
///
/// ```swift
/// let push = PushServer(store: store, codecs: CodecSet([JSONCodec()]))
/// let router = ServiceRouter()
///     .mounting(AquasyncServer(store: store, codecs: codecs), at: "/deltas")
///     .mounting(push, at: "/push")
///     .with(push.writerMiddleware)          // so a device is not notified of its own writes
/// let server = PushHTTPServer(HTTPSyncServer(service: router, authenticator: authenticator), push: push)
/// try await server.runService()             // runs the push server's listener too
/// ```
///
/// It learns of commits from the store (``SyncCore/ChangeNotifyingStore``): in
/// process for `MemoryStore` and `SQLiteStore`, through PostgreSQL's
/// `LISTEN/NOTIFY` for `PostgresStore`, so with several server processes on
/// one database each hears every process's commits. A commit notifies every
/// device of the account registered for a changed collection, except the
/// device that wrote (the request's `X-Device-Token`, which
/// ``writerMiddleware`` hands to the store as ``SyncCore/StoreChange/writer``).
///
/// Each device has a queue of its last ``Configuration/queueLength``
/// notifications. A device that reconnects with `after=SEQ` gets the queued
/// ones after SEQ, the first flagged `retained`; when some were dropped, or
/// the server never gave SEQ (it restarted, or the device was connected to
/// another process), it gets `{"seq": N, "token": null, "retained": true}`
/// instead. Either way it syncs everything it monitors.
///
/// Registrations live in the server's memory: a restarted server knows no
/// device until it registers again, which the push client does on every connection.
///
/// The server listens to the store from the first registration on, not
/// before: a commit can only notify a registered device, and a process that
/// no device uses for push (say, one of several behind a load balancer) then
/// spends nothing on the commits of all the others. The first registration
/// is answered once the listening started, so no commit after its answer
/// goes unheard.
public final class PushServer: SyncService, Service {
    /// Limits and schedules.
    public struct Configuration: Sendable {
        /// How many notifications a device's queue keeps (64 by default).
        public var queueLength: Int
        /// How often devices poll the collections without push.
        public var pollInterval: Duration
        /// Whether a collection has push; the others are answered in `poll`. Every collection by default.
        public var hasPush: @Sendable (CollectionID) -> Bool
        /// The most collections one device may register.
        public var maxCollectionsPerDevice: Int
        /// The most devices kept per account; registering one more forgets the one least recently seen.
        public var maxDevicesPerAccount: Int
        /// The largest registration body accepted.
        public var maxRegistrationBytes: Int
        /// The accounts mail servers post as (`POST /push/mail`); no other account may post there. None by default.
        public var mailServers: Set<AccountID> = []
        /// How often a stream pings its device; a stream whose device has not answered a ping by the next
        /// one is closed (30 seconds by default).
        public var streamPingInterval: Duration = .seconds(30)
        /// The wall clock a newly registered device's notification numbers start from (the time in
        /// milliseconds, so that they stay above those an earlier server process gave it); the system's by default.
        public var clock: any WallClock = SystemWallClock()

        /// Makes a configuration.
        public init(
            queueLength: Int = 64, pollInterval: Duration = .seconds(300),
            hasPush: @escaping @Sendable (CollectionID) -> Bool = { _ in true }, maxCollectionsPerDevice: Int = 256,
            maxDevicesPerAccount: Int = 10_000, maxRegistrationBytes: Int = 64 << 10
        ) {
            self.queueLength = max(1, queueLength)
            self.pollInterval = max(.seconds(1), pollInterval)
            self.hasPush = hasPush
            self.maxCollectionsPerDevice = max(1, maxCollectionsPerDevice)
            self.maxDevicesPerAccount = max(1, maxDevicesPerAccount)
            self.maxRegistrationBytes = max(1_024, maxRegistrationBytes)
        }
    }

    /// Where commits are announced.
    public let store: any ChangeNotifyingStore
    /// The codecs registrations are read and answered in.
    public let codecs: CodecSet
    /// Limits and schedules.
    public let configuration: Configuration
    /// Where the listener's and the streams' lines go.
    public let logger: Logger
    package let hub: PushHub
    private let listening = Mutex(Listening())
    /// Test hook: cut a device's WebSocket after half of this notification's bytes.
    package let cutMidMessage = Mutex<(@Sendable (PushNotification) -> Bool)?>(nil)

    /// Makes a push server; it hears of commits once ``run()`` runs.
    public init(
        store: any ChangeNotifyingStore, codecs: CodecSet, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "anchorage.push")
    ) {
        self.store = store
        self.codecs = codecs
        self.configuration = configuration
        self.logger = logger
        self.hub = PushHub(configuration: configuration)
    }

    // MARK: Listening to the store

    /// Where ``run()`` stands, and who waits for it.
    private struct Listening {
        /// Whether a device registered, so ``run()`` listens (or is about to).
        var isWanted = false
        /// Whether ``run()`` listens, or waits for the first registration: every commit from now on reaches
        /// the registered devices.
        var isReady = false
        /// Whether ``run()`` listens to the store.
        var isListening = false
        /// Waiting for `isReady` (``waitUntilListening()``).
        var readyWaiters: [CheckedContinuation<Void, Never>] = []
        /// Waiting for `isListening` (the first registrations).
        var listeningWaiters: [CheckedContinuation<Void, Never>] = []
        /// ``run()``, waiting for the first registration.
        var wantedWaiter: CheckedContinuation<Void, Never>?
    }

    /// Listens to the store's commits until cancelled (or a graceful shutdown),
    /// notifying devices, from the first registration on. When the store stops
    /// announcing (a lost database connection), listening starts again, and
    /// every device is told to sync everything, since commits meanwhile went unheard.
    public func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            await waitForFirstRegistration()
            await listen()
        }
        // Stopped: no stream stays open on a server that no longer notifies, whether the stop was a
        // graceful shutdown or a cancellation (which the streams' own handlers do not see).
        await hub.disconnectAll()
        // Registrations waiting for a listener that will not come are answered, and later ones do not wait.
        let waiters = listening.withLock { state in
            defer {
                state.isReady = false
                state.listeningWaiters = []
            }
            return state.listeningWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once a device registered (at once when one did), or when the task is cancelled.
    private func waitForFirstRegistration() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (wanted: CheckedContinuation<Void, Never>) in
                // With a device registered, run() is ready once it listens; without, it is ready now.
                let (isWanted, ready) = listening.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    guard !state.isWanted else { return (true, []) }
                    defer { state.readyWaiters = [] }
                    state.isReady = true
                    state.wantedWaiter = wanted
                    return (false, state.readyWaiters)
                }
                for waiter in ready { waiter.resume() }
                if isWanted {
                    wanted.resume()
                } else if Task.isCancelled {
                    stopWaitingForRegistration()
                }
            }
        } onCancel: {
            stopWaitingForRegistration()
        }
    }

    private func stopWaitingForRegistration() {
        let waiter = listening.withLock { state in
            defer { state.wantedWaiter = nil }
            return state.wantedWaiter
        }
        waiter?.resume()
    }

    /// Has ``run()`` listen to the store, if it does not yet, and returns once it does (or at once when
    /// ``run()`` is not running: it listens from its start then).
    private func listenForRegisteredDevices() async {
        guard !listening.withLock({ $0.isListening }) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (waits, runWaiter) = listening.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                state.isWanted = true
                defer { state.wantedWaiter = nil }
                // Before run() started (or after it stopped) there is nothing to wait for.
                guard state.isReady, !state.isListening else { return (false, state.wantedWaiter) }
                state.listeningWaiters.append(continuation)
                return (true, state.wantedWaiter)
            }
            runWaiter?.resume()
            if !waits { continuation.resume() }
        }
    }

    private func listen() async {
        var failures = 0
        while !Task.isCancelled {
            do {
                let changes = try await store.changeNotifications()
                if failures > 0 { await hub.lostNotifications() }
                failures = 0
                nowListening()
                for await change in changes {
                    await hub.announce(change)
                }
                if Task.isCancelled { break }
                logger.warning("the store stopped announcing commits; listening again")
            } catch {
                logger.warning("cannot listen to the store's commits: \(error)")
            }
            failures += 1
            try? await Task.sleep(for: .milliseconds(min(5_000, 100 * failures)))
        }
    }

    /// Waits until ``run()`` is ready: it listens to the store, or waits for the first registration, which
    /// it answers once it listens. Either way every commit after this returns reaches every device
    /// registered.
    public func waitUntilListening() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = listening.withLock { state -> Bool in
                guard !state.isReady else { return true }
                state.readyWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Whether ``run()`` listens to the store now (it does from the first registration on).
    public var isListening: Bool { listening.withLock { $0.isListening } }

    private func nowListening() {
        let waiters = listening.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer {
                state.isListening = true
                state.isReady = true
                state.readyWaiters = []
                state.listeningWaiters = []
            }
            return state.readyWaiters + state.listeningWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Notifies devices of a change as if the store had announced it (for a
    /// change the store cannot announce, such as one in another system).
    /// - Returns: How many notifications were made.
    @discardableResult
    public func announce(_ change: StoreChange) async -> Int {
        await hub.announce(change)
    }

    /// The registered devices of `account`, sorted by device token: what they monitor, whether a
    /// stream is open, and how many notifications are kept for them.
    public func deviceStatuses(of account: AccountID) async -> [PushDeviceStatus] {
        await hub.statuses(of: account)
    }

    /// How many devices are registered, and how many are connected now.
    public func deviceCounts() async -> (registered: Int, connected: Int) {
        await hub.counts()
    }

    // MARK: SyncService

    /// `POST {mount}/register`, `POST {mount}/mail` (a mail server's notification) and `GET {mount}/stream`:
    /// `101` for a registered device's WebSocket upgrade (``SyncCore/SyncRequest/upgrade``), 404 for a
    /// device that is not registered, 426 without the upgrade.
    public func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        switch (request.pathWithoutQuery.dropFirst(context.mountPath.count), request.method) {
        case ("/register", .post):
            let (input, output) = try codecs.negotiate(contentType: request.contentType, accept: request.accept)
            guard request.body.count <= configuration.maxRegistrationBytes else {
                throw SyncServiceError.payloadTooLarge(limit: configuration.maxRegistrationBytes)
            }
            let registration: PushRegistration
            do {
                registration = try SyncValueDecoder().decode(PushRegistration.self, from: try input.decode(request.body))
            } catch let error as CodecError {
                throw error
            } catch {
                throw SyncServiceError.badRequest("the body must be {\"deviceToken\": \"…\", \"collections\": [\"…\"]}")
            }
            let answer = try await hub.register(
                PushHub.Key(account: context.account, device: registration.deviceToken), collections: registration.collections)
            // The device hears of every commit after this answer.
            await listenForRegisteredDevices()
            return try .encoded(try SyncValueEncoder().encode(answer), with: output)
        case ("/stream", .get):
            let (device, _) = try Self.streamParameters(request.queryItems)
            guard await hub.isRegistered(PushHub.Key(account: context.account, device: device)) else {
                throw SyncServiceError.notFound("device \(device) is not registered: POST /push/register first")
            }
            // 101 grants the WebSocket upgrade the server asked about (PushHTTPServer switches the connection).
            guard request.upgrade?.lowercased() == "websocket" else {
                throw SyncServiceError(status: 426, message: "the push stream is a WebSocket: send Upgrade: websocket")
            }
            return SyncResponse(status: 101)
        case ("/mail", .post):
            guard configuration.mailServers.contains(context.account) else {
                throw SyncServiceError(status: 403, message: "account \(context.account) may not post mail notifications")
            }
            guard request.body.count <= configuration.maxRegistrationBytes else {
                throw SyncServiceError.payloadTooLarge(limit: configuration.maxRegistrationBytes)
            }
            let notice = try MailPushNotice(json: request.body)
            for (key, token) in notice.deviceTokens where !(await hub.notify(key, token: token)) {
                logger.info(
                    "a mail notification names no device registered with its token; nothing sent",
                    metadata: ["device": "\(key.device)", "account": "\(key.account)"])
            }
            return SyncResponse(status: 202)
        case ("/register", _), ("/stream", _), ("/mail", _):
            throw SyncServiceError.methodNotAllowed("register and mail are POST, stream is GET")
        default:
            throw SyncServiceError.notFound("no push resource at \(request.pathWithoutQuery)")
        }
    }

    /// The device token and `after` of a stream request.
    /// - Throws: 400 when either is missing or malformed.
    static func streamParameters(_ query: [String: String]) throws(SyncServiceError) -> (device: String, after: UInt64) {
        guard let device = query["deviceToken"], DeviceToken.isValid(device) else {
            throw .badRequest("deviceToken= must name the registered device (1 to \(DeviceToken.maxLength) characters of A-Z a-z 0-9 . _ : -)")
        }
        guard let after = UInt64(query["after"] ?? "0") else {
            throw .badRequest("after= must be the last seq the device received, a non-negative integer")
        }
        return (device, after)
    }

    // MARK: The writing device

    /// Runs each request's store transactions with ``SyncCore/StoreChange/writer`` set to
    /// the request's device (`X-Device-Token`), so the device is not notified of
    /// its own writes; a malformed device token is answered 400.
    public var writerMiddleware: any SyncServiceMiddleware { WriterMiddleware() }

    private struct WriterMiddleware: SyncServiceMiddleware {
        func intercept(
            _ request: SyncRequest, context: ServiceContext,
            next: @Sendable (SyncRequest, ServiceContext) async throws -> SyncResponse
        ) async throws -> SyncResponse {
            guard let device = request.device else { return try await next(request, context) }
            guard DeviceToken.isValid(device) else {
                throw SyncServiceError.badRequest("X-Device-Token must be 1 to \(DeviceToken.maxLength) characters of A-Z a-z 0-9 . _ : -")
            }
            return try await StoreChange.$writer.withValue(device) { try await next(request, context) }
        }
    }
}

/// A client middleware that names the device in every request (`X-Device-Token`),
/// so the push server does not notify the device of its own writes.
///
/// ```swift
/// let transport = HTTPClientTransport(baseURL: server)
///     .with(CredentialsMiddleware(credentials))
///     .with(PushDeviceMiddleware(deviceToken: "phone-7"))
/// ```
public struct PushDeviceMiddleware: SyncRequestAdjuster {
    /// The device's token, as it registers with the push server.
    public var deviceToken: String
    /// Makes the middleware.
    public init(deviceToken: String) { self.deviceToken = deviceToken }
    /// Sets the request's device.
    public func adjust(_ request: inout SyncRequest) { request.device = deviceToken }
}

/// A registered push device as the push server sees it now (``PushServer/deviceStatuses(of:)``).
public struct PushDeviceStatus: Sendable, Hashable {
    /// The device's token (the `X-Device-Token` its sync requests carry).
    public var device: String
    /// The collections it monitors, sorted.
    public var collections: [CollectionID]
    /// Whether its stream is open now.
    public var isConnected: Bool
    /// The notifications kept for it (at most the queue length): what a reconnecting device is sent after its last one.
    public var queued: Int

    /// Makes a status.
    public init(device: String, collections: [CollectionID], isConnected: Bool, queued: Int) {
        self.device = device
        self.collections = collections
        self.isConnected = isConnected
        self.queued = queued
    }
}
