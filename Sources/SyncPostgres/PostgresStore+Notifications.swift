import Logging
import PostgresNIO
public import SyncCore
import SyncJSON
import Synchronization

extension PostgresStore: ChangeNotifyingStore {
    /// The commits that write records from now on, in any process that
    /// writes to this database and schema's notification channel: the
    /// account, the collections written and the writing device
    /// (``SyncCore/StoreChange/writer``).
    ///
    /// ```swift
    /// for await change in try await store.changeNotifications() {
    ///     await pushServer.announce(change)   // notify the devices monitoring change.collections
    /// }
    /// ```
    ///
    /// Returns once the store listens (`LISTEN` on
    /// ``Configuration/notificationChannel``), so every commit that writes
    /// records after this returns is announced. Read
    /// ``changes(for:after:in:limit:)`` to learn what changed. Identical
    /// notifications of one transaction are folded by PostgreSQL. A commit
    /// that writes so many collections that their names do not fit in a
    /// notification (8,000 bytes) is announced with `collections` `nil`.
    ///
    /// The stream holds one pooled connection while it is iterated. It
    /// finishes when that connection fails (for example when the database
    /// restarts): notifications sent while nobody listens are lost, so call
    /// this again and compare each account's ``latestPosition(for:)`` with the
    /// last position handled. Stop listening by ending the iteration (or
    /// cancelling its task).
    /// - Throws: ``SyncCore/StoreError/Code/unavailable`` when the store cannot start listening.
    public func changeNotifications() async throws -> AsyncStream<StoreChange> {
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
        let (client, channel, logger) = (self.client, configuration.notificationChannel, configuration.logger)
        let started = ListeningSignal()
        let listener = Task {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        started.succeed()
                        for try await notification in notifications {
                            continuation.yield(StoreQueries.change(fromNotification: notification.payload))
                        }
                    }
                }
                started.fail(CancellationError())
            } catch {
                if !started.fail(error) {
                    logger.warning(
                        "the change notification listener stopped",
                        metadata: ["channel": "\(channel)", "error": "\(String(reflecting: error))"])
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in listener.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await started.wait()
            } onCancel: {
                listener.cancel()
            }
        } catch {
            listener.cancel()
            throw PostgresErrors.wrapping(error, while: "listening on channel \(channel)")
        }
        return stream
    }
}

extension StoreQueries {
    /// PostgreSQL refuses payloads of 8,000 bytes or more.
    private static let maxPayloadBytes = 7_900

    /// The payload announcing a commit of `account` that writes the records of `writes`:
    /// JSON `{"account", "collections", "device"}` (keys sorted), without the collections when they do not fit.
    /// Written and read with Anchorage's JSON codec: every commit sends one, and every server process reads
    /// every one, and the codec does both in a fraction of the time of Foundation's `JSONEncoder` and `JSONDecoder`.
    static func notificationPayload(for account: AccountID, _ writes: PendingWrites) -> String {
        let change = StoreChange.committing(writes.puts, of: account)
        var payload: [String: SyncValue] = ["account": .string(account.rawValue)]
        if let device = change?.device { payload["device"] = .string(device) }
        if let collections = change?.collections {
            payload["collections"] = .array(collections.map(\.rawValue).sorted().map(SyncValue.string))
        }
        if let bytes = try? JSONCodec().encode(.dictionary(payload)), bytes.count <= maxPayloadBytes {
            return String(decoding: bytes, as: UTF8.self)
        }
        payload["collections"] = nil
        if let bytes = try? JSONCodec().encode(.dictionary(payload)), bytes.count <= maxPayloadBytes {
            return String(decoding: bytes, as: UTF8.self)
        }
        return account.rawValue
    }

    /// The change a notification's payload announces; a payload that is not
    /// the JSON form (a bare account name, as older versions send) changed every collection.
    static func change(fromNotification payload: String) -> StoreChange {
        guard payload.hasPrefix("{"), case .dictionary(let fields)? = try? JSONCodec().decode(Array(payload.utf8)),
            case .string(let account)? = fields["account"]
        else { return StoreChange(account: AccountID(payload), collections: nil) }
        var collections: Set<CollectionID>?
        if case .array(let names)? = fields["collections"] {
            collections = Set(names.compactMap { name in
                if case .string(let name) = name { CollectionID(name) } else { nil }
            })
        }
        var device: String?
        if case .string(let name)? = fields["device"] { device = name }
        return StoreChange(account: AccountID(account), collections: collections, device: device)
    }
}

/// Tells a waiter once whether listening started or failed.
private final class ListeningSignal: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Void, any Error>?)
        case finished(Result<Void, any Error>)
    }

    private let state = Mutex(State.waiting(nil))

    /// Listening started.
    func succeed() { finish(.success(())) }

    /// Listening could not start (or ended before it did); `false` when the outcome was already settled.
    @discardableResult
    func fail(_ error: any Error) -> Bool { finish(.failure(error)) }

    /// Waits for the outcome.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let settled: Result<Void, any Error>? = state.withLock { state in
                switch state {
                case .waiting:
                    state = .waiting(continuation)
                    return nil
                case .finished(let result):
                    return result
                }
            }
            if let settled { continuation.resume(with: settled) }
        }
    }

    @discardableResult
    private func finish(_ result: Result<Void, any Error>) -> Bool {
        let (settledNow, waiter): (Bool, CheckedContinuation<Void, any Error>?) = state.withLock { state in
            guard case .waiting(let waiter) = state else { return (false, nil) }
            state = .finished(result)
            return (true, waiter)
        }
        waiter?.resume(with: result)
        return settledNow
    }
}
