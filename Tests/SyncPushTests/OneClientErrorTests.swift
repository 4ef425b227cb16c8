import AppSync
import Aquasync
import Foundation
import OTASync
import SyncCore
import SyncHTTPClient
import SyncJSON
import SyncTesting
import TestSupport
import Testing

@testable import SyncPush

/// Every stack's client throws the one ``SyncClientError`` — for a failed exchange and for its
/// protocol's own refusals — and its codes are matched in a `catch` by name; the push client decides
/// whether to reconnect by the failure's class. Over HTTP against a server on a loopback port.
@Suite("One client error")
struct OneClientErrorTests {
    @Test("catch SyncClientError.unauthorized catches the server's 401, in every stack", arguments: PushDevice.Stack.allCases)
    func unauthorizedIsCaughtByName(_ stack: PushDevice.Stack) async throws {
        let server = try await PushTestServer.start(store: MemoryStore())
        defer { Task { await server.stop() } }
        let transport = HTTPClientTransport(baseURL: server.url)
            .with(CredentialsMiddleware(.basic(username: "ada", password: "wrong")))
        let store = MemoryStore()
        var caught: SyncClientError?
        do {
            switch stack {
            case .aquasync:
                _ = try await AquasyncClient(store: store, transport: transport, codec: JSONCodec()).sync()
            case .appsync:
                _ = try await AppSyncClient(store: store, transport: transport, codec: JSONCodec(), types: [AppSyncObjectType("booking")]).sync()
            case .ota:
                _ = try await OTAClient(
                    records: OTADeviceRecords(store: store, account: "ada"), deviceID: "phone", transport: transport, codec: JSONCodec(),
                    dataclasses: [PushTestServer.dataclass]
                ).sync()
            }
            Issue.record("a wrong password synced")
        } catch SyncClientError.rejected, SyncClientError.refused {
            Issue.record("a 401 matched another code")
        } catch SyncClientError.unauthorized {
            caught = SyncClientError(.unauthorized, "caught by name")
        }
        #expect(caught != nil)
        // The same error, read as a value: the status and no stack (HTTP's answer, not a protocol's).
        do {
            _ = try await AppSyncClient(store: store, transport: transport, codec: JSONCodec(), types: [AppSyncObjectType("booking")]).sync()
        } catch let error as SyncClientError {
            #expect(error.code == .unauthorized && error.status == 401 && error.stack == nil, "\(error)")
            #expect(SyncFailureClass(of: error) == .retryLater)
        }
        await server.stop()
    }

    @Test("an OTA refusal arrives as SyncClientError.refused with stack ota, the OTA status and the server's reason")
    func otaRefusal() async throws {
        let server = try await PushTestServer.start(store: MemoryStore())
        defer { Task { await server.stop() } }
        let transport = HTTPClientTransport(baseURL: server.url)
            .with(CredentialsMiddleware(.basic(username: "ada", password: "secret")))
        let store = MemoryStore()
        let client = OTAClient(
            records: OTADeviceRecords(store: store, account: "ada"), deviceID: "phone", transport: transport, codec: JSONCodec(),
            dataclasses: ["com.apple.Calendars"])
        do {
            _ = try await client.sync()
            Issue.record("a dataclass the server does not sync was synced")
        } catch SyncClientError.refused {
            // Caught by name; read below.
        }
        let error = try #require(await #expect(throws: SyncClientError.self) { try await client.sync() })
        #expect(error.code == .refused && error.stack == "ota", "\(error)")
        #expect(error.status == OTAStatus.notSupported.code, "E_NotSupported (614): \(error)")
        #expect(error.reason?.isEmpty == false, "\(error)")
        #expect(error.message.hasPrefix("com.apple.Calendars: E_NotSupported (614)"), "\(error.message)")
        #expect(SyncFailureClass(of: error) == .refused, "an OTA status is not read as an HTTP status")
        await server.stop()
    }

    @Test("an appSync refusal arrives as SyncClientError.refused with stack appsync, the protocol's status and the reason")
    func appSyncRefusal() async throws {
        let client = AppSyncClient(
            store: MemoryStore(), transport: HTTPClientTransport(baseURL: URL(string: "http://127.0.0.1:9")!), codec: JSONCodec(),
            types: [AppSyncObjectType("booking")])
        let first = try await client.save("booking", fields: ["pk": "room-1"])
        do {
            try await client.save("booking", fields: ["pk": "room-1"])
            Issue.record("a second object took a primary key another local object holds")
        } catch SyncClientError.refused {
            // Caught by name, before anything was sent.
        }
        let held = try #require(await #expect(throws: SyncClientError.self) { try await client.save("booking", fields: ["pk": "room-1"]) })
        #expect(held.code == .refused && held.stack == "appsync" && held.status == 409, "\(held)")
        #expect(held.reason == "object \(first) already has this primary key", "\(held)")
        #expect(SyncFailureClass(of: held) == .conflict, "409 is appSync's primary-key conflict")

        let missing = try #require(await #expect(throws: SyncClientError.self) { try await client.delete("booking", guid: "nothing") })
        #expect(missing.code == .refused && missing.stack == "appsync" && missing.status == 404, "\(missing)")
        let reserved = try #require(
            await #expect(throws: SyncClientError.self) { try await client.save("booking", fields: ["guid": "x"]) })
        #expect(reserved.code == .refused && reserved.status == 400 && reserved.reason == "guid is a protocol field", "\(reserved)")
    }

    @Test("the push client reconnects after a failure that may pass (401) and stops at one that will not (400)")
    func pushReconnectsByClass() async throws {
        let server = try await PushTestServer.start(store: MemoryStore())
        defer { Task { await server.stop() } }
        func pushClient(token: String, password: String) -> PushClient {
            PushClient(
                server: server.url, credentials: .basic(username: "ada", password: password), deviceToken: token,
                collections: ["aquasync/Contact"],
                transport: HTTPClientTransport(baseURL: server.url).with(CredentialsMiddleware(.basic(username: "ada", password: password))),
                codec: JSONCodec(),
                configuration: .init(reconnect: RetryPolicy(maxAttempts: .max, initialDelay: .milliseconds(20), jitter: 0, maxElapsed: nil))
            ) { _ in }
        }

        // 401 is retry later: the client keeps trying, waiting as its policy says.
        let wrongPassword = pushClient(token: "phone", password: "wrong")
        let log = await EventLog.recording(wrongPassword)
        let run = Task { try await wrongPassword.run() }
        defer { run.cancel() }
        try await log.wait(for: "the first failed connection") { $0.isDisconnect }
        try await log.wait(for: "a second failed connection", from: await log.count) { $0.isDisconnect }
        let firstEvents = await log.events
        guard case .disconnected(let message, let retryIn)? = firstEvents.first(where: { $0.isDisconnect }) else {
            throw PushError(.invalidMessage, "no disconnect event")
        }
        #expect(message.contains("401") && retryIn == .milliseconds(20), "\(message), \(retryIn)")
        do {
            try await wrongPassword.run()
            Issue.record("a second run() of a running client ran")
        } catch PushError.alreadyRunning {
            // The client runs once at a time.
        }
        run.cancel()

        // A device token the server refuses (400) is refused: run() ends with the registration's error.
        let badToken = pushClient(token: "not a token!", password: "secret")
        let badLog = await EventLog.recording(badToken)
        do {
            try await badToken.run()
            Issue.record("run() ended without an error")
        } catch SyncClientError.rejected {
            // Caught by name.
        }
        let badEvents = await badLog.events
        let reconnected = badEvents.contains { $0.isDisconnect }
        #expect(!reconnected, "no reconnect after a refusal")
        #expect(PushClient.failureClass(of: SyncClientError(.rejected, status: 400, "POST /push/register: 400")) == .refused)
        #expect(PushClient.failureClass(of: PushError(.invalidMessage, "garbled")) == .retryLater)
        #expect(PushClient.failureClass(of: PushError(.invalidServer, "no address")) == .refused)
        await server.stop()
    }

    @Test("a push client that may give up throws the last failure after maxAttempts connections in a row")
    func pushGivesUpAfterMaxAttempts() async throws {
        // A socket bound to the port but not listening: every connection is refused, a failure that may pass.
        let (descriptor, port) = try LoopbackSocket.bind(listening: false)
        defer { close(descriptor) }
        let url = URL(string: "http://127.0.0.1:\(port)")!
        let client = PushClient(
            server: url, credentials: nil, deviceToken: "phone", collections: ["aquasync/Contact"],
            transport: HTTPClientTransport(baseURL: url), codec: JSONCodec(),
            configuration: .init(reconnect: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(1), jitter: 0, maxElapsed: nil))
        ) { _ in }
        let log = await EventLog.recording(client)
        do {
            try await client.run()
            Issue.record("run() ended without an error")
        } catch SyncClientError.connectionFailed {
            // The third failure in a row.
        }
        let events = await log.events
        let disconnects = events.count { $0.isDisconnect }
        #expect(disconnects == 2, "two reconnections, then the third failure is thrown")
    }
}
