#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Synchronization

/// What a client's syncing is doing, for a UI to show: idle, syncing (with the requests made so far),
/// waiting to retry, up to date, offline, or failed — and how many conflicts wait for an answer.
public struct SyncState: Sendable, Hashable {
    /// What the client is doing.
    public enum Activity: Sendable, Hashable {
        /// No sync has run since the client was made.
        case idle
        /// A sync runs; `requests` of its requests have been sent so far.
        case syncing(requests: Int)
        /// A sync's request failed in a way that may pass (no answer, a 503); it is sent again after `after`.
        case retrying(after: Duration, reason: String)
        /// The last sync succeeded.
        case upToDate
        /// The last sync could not reach the server (one plain sentence why); local changes wait for the next.
        case offline(reason: String)
        /// The last sync failed otherwise — refused, unauthorized, a full disk (one line why).
        case failed(reason: String)
    }

    /// What the client is doing.
    public var activity: Activity
    /// Conflicts that wait for the application's answer, as the last sync left them.
    public var conflictsWaiting: Int
    /// When a sync last succeeded, if one did.
    public var lastSuccess: Date?

    /// Makes a state.
    public init(activity: Activity, conflictsWaiting: Int = 0, lastSuccess: Date? = nil) {
        self.activity = activity
        self.conflictsWaiting = conflictsWaiting
        self.lastSuccess = lastSuccess
    }
}

/// A sync's outcome that tells how many conflicts wait for an answer (every stack's report does), so that
/// ``SyncStatus`` can show it.
public protocol ReportsWaitingConflicts {
    /// Conflicts that wait for the application's answer after the sync.
    var conflictsWaiting: Int { get }
}

/// A client's ``SyncState``, kept by its ``SyncGate`` — every sync runs through it — and by the
/// ``SyncEndpoint`` its requests go through (requests sent, waits before a retry).
///
/// ```swift
/// for await state in client.syncStatus.states() {
///     switch state.activity {
///     case .syncing(let requests): spinner.show("syncing… (\(requests))")
///     case .offline(let reason): banner.show(reason)   // local changes wait
///     default: spinner.hide()
///     }
/// }
/// ```
public final class SyncStatus: Sendable {
    private struct Listeners {
        var state = SyncState(activity: .idle)
        var continuations: [Int: AsyncStream<SyncState>.Continuation] = [:]
        var nextID = 0
    }

    private let listeners = Mutex(Listeners())
    private let now: @Sendable () -> Date

    /// The status of the sync running in this task, which its endpoint reports requests and retries to.
    @TaskLocal static var running: SyncStatus?

    /// Makes an idle status.
    /// - Parameter now: The wall clock that dates a success (a fixed one in tests).
    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// The state now.
    public var current: SyncState { listeners.withLock { $0.state } }

    /// The state now, then each change, until the consuming task is cancelled. Changes that come while the
    /// consumer is busy leave only the latest waiting.
    public func states() -> AsyncStream<SyncState> {
        let (stream, continuation) = AsyncStream<SyncState>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = listeners.withLock { listeners in
            let id = listeners.nextID
            listeners.nextID += 1
            listeners.continuations[id] = continuation
            continuation.yield(listeners.state)
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.listeners.withLock { _ = $0.continuations.removeValue(forKey: id) } }
        return stream
    }

    /// A sync starts.
    func began() { update { $0.activity = .syncing(requests: 0) } }

    /// The running sync sends a request.
    func requestSent() {
        update { state in
            switch state.activity {
            case .syncing(let requests): state.activity = .syncing(requests: requests + 1)
            default: state.activity = .syncing(requests: 1)
            }
        }
    }

    /// The running sync waits `wait` before sending a request again.
    func retrying(after wait: Duration, reason: String) { update { $0.activity = .retrying(after: wait, reason: reason) } }

    /// The sync ended with `outcome`.
    func succeeded(_ outcome: Any) {
        let time = now()
        update { state in
            state.activity = .upToDate
            state.lastSuccess = time
            if let report = outcome as? any ReportsWaitingConflicts { state.conflictsWaiting = report.conflictsWaiting }
        }
    }

    /// The sync failed with `error`: offline when the server could not be reached, failed otherwise.
    func failed(_ error: any Error) {
        if error is CancellationError {
            update { $0.activity = $0.lastSuccess == nil ? .idle : .upToDate }
            return
        }
        let activity: SyncState.Activity
        if let clientError = error as? SyncClientError, clientError.code == .connectionFailed {
            activity = .offline(reason: clientError.message)
        } else if let clientError = error as? SyncClientError {
            activity = .failed(reason: clientError.message)
        } else {
            activity = .failed(reason: "\(error)")
        }
        update { $0.activity = activity }
    }

    private func update(_ change: (inout SyncState) -> Void) {
        listeners.withLock { listeners in
            let before = listeners.state
            change(&listeners.state)
            guard listeners.state != before else { return }
            for continuation in listeners.continuations.values { continuation.yield(listeners.state) }
        }
    }
}
