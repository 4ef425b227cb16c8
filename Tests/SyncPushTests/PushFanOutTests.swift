import Foundation
import SyncCore
import Testing

@testable import SyncPush

/// One change announced to more devices than the hub notifies between two turns for other work.
@Suite("Push: fan-out in batches")
struct PushFanOutTests {
    @Test("every device of the account but the writer is notified once, across batches")
    func everyDeviceButTheWriterIsNotifiedOnce() async throws {
        let hub = PushHub(configuration: PushServer.Configuration())
        let count = 2 * PushHub.fanOutBatch + 45
        var streams: [AsyncStream<PushNotification>.AsyncIterator] = []
        for index in 0..<count {
            let key = PushHub.Key(account: "ada", device: "device-\(index)")
            _ = try await hub.register(key, collections: ["notes"])
            let (_, stream) = try #require(await hub.connect(key, after: 0))
            var iterator = stream.makeAsyncIterator()
            let resync = try #require(await iterator.next())
            #expect(resync.token == nil && resync.retained)
            streams.append(iterator)
        }
        _ = try await hub.register(PushHub.Key(account: "bob", device: "device-0"), collections: ["notes"])

        let made = await hub.announce(StoreChange(account: "ada", collections: ["notes"], device: "device-0"))

        #expect(made == count - 1)
        for index in 1..<count {
            let key = PushHub.Key(account: "ada", device: "device-\(index)")
            #expect(await hub.queued(key) == 1)
            let notification = try #require(await streams[index].next())
            #expect(notification.token != nil && !notification.retained)
        }
        #expect(await hub.queued(PushHub.Key(account: "ada", device: "device-0")) == 0)
        #expect(await hub.queued(PushHub.Key(account: "bob", device: "device-0")) == 0)
    }
}

@Suite("Push: the notification's JSON")
struct PushNotificationJSONTests {
    @Test("written directly, it is what JSONEncoder writes with sorted keys", arguments: [
        PushNotification(seq: 1_764_000_000_123, token: "0f3a9c27e4b15d68a0c2e9f7b3d41a56", retained: false),
        PushNotification(seq: 7, token: nil, retained: true),
        PushNotification(seq: UInt64.max, token: "Notes.v2:mail_box-1", retained: true),
        PushNotification(seq: 3, token: "quote \" and back\\slash/ é", retained: false),
    ])
    func writtenDirectlyAsJSONEncoderWouldWriteIt(_ notification: PushNotification) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let expected = String(decoding: try encoder.encode(notification), as: UTF8.self)
        #expect(notification.json == expected)
        #expect(try PushNotification(json: notification.json) == notification)
    }
}

extension PushHub {
    /// Opens the device's stream into an `AsyncStream` that keeps up to twice the queue's length.
    func connect(_ key: Key, after: UInt64) -> (id: UInt64, stream: AsyncStream<PushNotification>)? {
        let (stream, continuation) = AsyncStream<PushNotification>.makeStream(
            bufferingPolicy: .bufferingOldest(2 * configuration.queueLength + 16))
        guard let id = connect(key, after: after, sink: AsyncStreamPushSink(continuation: continuation)) else { return nil }
        return (id, stream)
    }
}

/// A push stream into an `AsyncStream`, for reading the hub's notifications in a test.
struct AsyncStreamPushSink: PushSink {
    let continuation: AsyncStream<PushNotification>.Continuation

    func send(_ notification: PushNotification) -> Bool {
        if case .dropped = continuation.yield(notification) { return false }
        return true
    }

    func finish() { continuation.finish() }

    var queueIdentity: ObjectIdentifier? { nil }

    func drained() async {}
}
