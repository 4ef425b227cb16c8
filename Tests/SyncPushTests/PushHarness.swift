import AppSync
import Aquasync
import Foundation
import Logging
import OTASync
import ServiceLifecycle
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncJSON
import SyncPush
import SyncTesting
import TestSupport
import Testing

/// A sync server with every stack and the push server, over HTTP on a loopback port, in this process.
final class PushTestServer: Sendable {
    static let authenticator = StaticAuthenticator(passwords: ["ada": "secret", "bob": "secret"])
    static let dataclass = "com.apple.Contacts"

    let store: any ChangeNotifyingStore
    let push: PushServer
    let url: URL
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(store: any ChangeNotifyingStore, push: PushServer, port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.store = store
        self.push = push
        self.port = port
        self.url = URL(string: "http://127.0.0.1:\(port)")!
        self.group = group
        self.task = task
    }

    /// Starts a server on `store` (on a free port, or `port`: for a server started again on the same
    /// port, take one from ``LoopbackSocket/restartablePort()``). A server started on the port of one
    /// just stopped tries again while the old listening socket is still being closed
    /// (``LoopbackSocket/retryingWhilePortTaken(_:)``).
    static func start(
        store: any ChangeNotifyingStore, port: Int = 0, configuration: PushServer.Configuration = .init(),
        connections: ConnectionLimits = .standard, loginThrottle: LoginThrottle.Policy? = nil,
        observability: ServerObservability = ServerObservability()
    ) async throws -> PushTestServer {
        try await LoopbackSocket.retryingWhilePortTaken {
            try await startOnce(
                store: store, port: port, configuration: configuration, connections: connections, loginThrottle: loginThrottle,
                observability: observability)
        }
    }

    private static func startOnce(
        store: any ChangeNotifyingStore, port: Int, configuration: PushServer.Configuration, connections: ConnectionLimits,
        loginThrottle: LoginThrottle.Policy?, observability: ServerObservability
    ) async throws -> PushTestServer {
        let push = PushServer(store: store, codecs: CodecSet([JSONCodec()]), configuration: configuration)
        let router = ServiceRouter()
            .mounting(AquasyncServer(store: store, codecs: CodecSet([JSONCodec()])), at: "/deltas")
            .mounting(AppSyncServer(store: store, codecs: CodecSet([JSONCodec()]), types: [AppSyncObjectType("booking")]), at: "/rest")
            .mounting(
                OTAServer(store: store, codecs: CodecSet([JSONCodec()]), dataclasses: [dataclass], conflictPolicy: NewestWinsPolicy()),
                at: "/ota")
            .mounting(push, at: "/push")
            .with(push.writerMiddleware)
        var logger = Logger(label: "push-test")
        logger.logLevel = .critical
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let http = HTTPSyncServer(
            service: router, authenticator: authenticator, configuration: .init(port: port, loginThrottle: loginThrottle, connections: connections), logger: logger,
            onRunning: { port in
                portContinuation.yield(port)
                portContinuation.finish()
            }, observability: observability)
        let group = ServiceGroup(
            configuration: .init(services: [PushHTTPServer(http, push: push)], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        let listening = await ports.first(where: { _ in true })
        if listening == nil { try await task.value }
        let bound = try #require(listening, "the test server stopped before it listened")
        return PushTestServer(store: store, push: push, port: bound, group: group, task: task)
    }

    /// Stops the server at once, cutting every connection: the devices' streams are closed first, as a
    /// graceful shutdown closes them (a cancelled server task alone was seen, on a loaded machine, to
    /// leave a device's WebSocket open after the task had ended).
    func stop() async {
        await push.hub.disconnectAll()
        task.cancel()
        _ = try? await task.value
    }
}

/// A device of Ada's syncing one stack with the server, with a push client.
struct PushDevice: Sendable {
    enum Stack: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case aquasync, appsync, ota
        var testDescription: String { rawValue }
        /// The server collection the stack's records live in.
        var collection: CollectionID {
            switch self {
            case .aquasync: "aquasync/Contact"
            case .appsync: "appsync/booking"
            case .ota: CollectionID(PushTestServer.dataclass)
            }
        }
    }

    let stack: Stack
    let token: String
    let store: MemoryStore
    let aquasync: AquasyncClient
    let appSync: AppSyncClient
    let ota: OTAClient
    let records: OTADeviceRecords

    init(_ stack: Stack, token: String, server: URL, account: String = "ada") {
        self.stack = stack
        self.token = token
        let store = MemoryStore()
        self.store = store
        let transport = HTTPClientTransport(baseURL: server)
            .with(CredentialsMiddleware(.basic(username: account, password: "secret")))
            .with(PushDeviceMiddleware(deviceToken: token))
        // A request that meets a keep-alive connection the restarted server has closed, before the
        // client noticed, fails as "I/O on closed channel": the next attempt opens a new one.
        let retry = RetryPolicy(maxAttempts: 3, initialDelay: .zero, jitter: 0)
        aquasync = AquasyncClient(store: store, transport: transport, codec: JSONCodec(), configuration: .init(retry: retry))
        appSync = AppSyncClient(
            store: store, transport: transport, codec: JSONCodec(), types: [AppSyncObjectType("booking")], configuration: .init(retry: retry))
        records = OTADeviceRecords(store: store, account: AccountID(account))
        ota = OTAClient(
            records: records, deviceID: token, transport: transport, codec: JSONCodec(), dataclasses: [PushTestServer.dataclass],
            configuration: .init(retry: retry))
    }

    /// Writes a record named `name` and syncs it to the server.
    func write(_ name: String, id: String = UUID().uuidString.lowercased()) async throws {
        switch stack {
        case .aquasync:
            _ = try await aquasync.save("Contact", gid: id, fields: ["name": .string(name)])
            _ = try await aquasync.sync()
        case .appsync:
            _ = try await appSync.save("booking", guid: id, fields: ["name": .string(name), "pk": .string(id)])
            _ = try await appSync.sync()
        case .ota:
            _ = try await records.save(dataclass: PushTestServer.dataclass, luid: id, entity: "com.apple.contacts.Contact", fields: ["name": .string(name)])
            _ = try await ota.sync()
        }
    }

    /// Syncs the collection (the push client's closure).
    func sync(_ collection: CollectionID) async throws {
        switch stack {
        case .aquasync: _ = try await aquasync.sync()
        case .appsync: _ = try await appSync.sync()
        case .ota: _ = try await ota.sync()
        }
    }

    /// The names of the device's live records, sorted.
    func names() async throws -> [String] {
        switch stack {
        case .aquasync: try await aquasync.objects("Contact").compactMap { $0.fields["name"]?.stringValue }.sorted()
        case .appsync: try await appSync.objects("booking").compactMap { $0.fields["name"]?.stringValue }.sorted()
        case .ota: try await records.records(dataclass: PushTestServer.dataclass).values.compactMap { $0.fields["name"]?.stringValue }.sorted()
        }
    }

    /// A push client monitoring `collections` (the stack's by default) that syncs through this device.
    func pushClient(
        server: URL, sleeper: any Clock<Duration> = ContinuousClock(), collections: [CollectionID]? = nil, account: String = "ada"
    ) -> PushClient {
        let transport = HTTPClientTransport(baseURL: server).with(CredentialsMiddleware(.basic(username: account, password: "secret")))
        let device = self
        return PushClient(
            server: server, credentials: .basic(username: account, password: "secret"), deviceToken: token,
            collections: collections ?? [stack.collection], transport: transport, codec: JSONCodec(),
            configuration: .init(reconnect: RetryPolicy(maxAttempts: .max, initialDelay: .milliseconds(100), maxDelay: .seconds(1), jitter: 0, maxElapsed: nil), sleeper: sleeper)
        ) { collection in
            try await device.sync(collection)
        }
    }
}

extension EventLog where Event == PushClient.Event {
    /// Starts recording `client`'s events.
    static func recording(_ client: PushClient) async -> EventLog {
        await recording(client.events)
    }
}

extension PushClient.Event {
    /// Whether this is a sync of `collection` for `reason`.
    func isSync(of collection: CollectionID, _ reason: PushClient.Reason? = nil) -> Bool {
        guard case .synced(let synced, let why) = self else { return false }
        return synced == collection && (reason == nil || why == reason)
    }

    /// Whether this is a notification.
    var isNotification: Bool { if case .notified = self { true } else { false } }

    /// Whether the stream closed.
    var isDisconnect: Bool { if case .disconnected = self { true } else { false } }
}
