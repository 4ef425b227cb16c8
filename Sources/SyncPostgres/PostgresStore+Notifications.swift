import Logging
import PostgresNIO
public import SyncCore
import Synchronization

extension PostgresStore {
    /// The accounts whose records change from now on, in any process that
    /// writes to this database and schema's notification channel.
    ///
    /// ```swift
    /// for await account in try await store.changeNotifications() {
    ///     await pushHub.accountChanged(account)   // then read store.changes(for: account, after: …)
    /// }
    /// ```
    ///
    /// Returns once the store listens (`LISTEN` on
    /// ``Configuration/notificationChannel``), so every commit that writes
    /// records after this returns is announced. A notification says only
    /// *that* an account changed; read ``changes(for:after:in:limit:)`` to learn
    /// what. Several commits close together may be announced once each or
    /// merged (PostgreSQL folds identical notifications of one transaction).
    ///
    /// The stream holds one pooled connection while it is iterated. It
    /// finishes when that connection fails (for example when the database
    /// restarts): notifications sent while nobody listens are lost, so call
    /// this again and compare each account's ``latestPosition(for:)`` with the
    /// last position handled. Stop listening by ending the iteration (or
    /// cancelling its task).
    /// - Throws: ``SyncCore/StoreError/Code/unavailable`` when the store cannot start listening.
    public func changeNotifications() async throws -> AsyncStream<AccountID> {
        let (stream, continuation) = AsyncStream<AccountID>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
        let (client, channel, logger) = (self.client, configuration.notificationChannel, configuration.logger)
        let started = ListeningSignal()
        let listener = Task {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        started.succeed()
                        for try await notification in notifications {
                            continuation.yield(AccountID(notification.payload))
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
            throw StoreError.wrapping(error, while: "listening on channel \(channel)")
        }
        return stream
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
