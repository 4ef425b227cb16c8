import Logging
import PostgresNIO
import SyncCore
import Synchronization

/// Decides which server answers a read of changes of a ``PostgresStore`` with a read replica, and runs it
/// there.
///
/// A read goes to the replica (a PostgreSQL hot standby) only once the replica has replayed the primary's WAL
/// up to where it reached when the read began: every commit that ended before the read began is then
/// visible, as it would be on the primary. So a device that has just pushed sees its write, and no reader
/// gets a position the next reader's server has not reached, however many server processes share the
/// database. When the replica does not get there within the wait, or fails, the read goes to the primary,
/// and so do the reads of the next ``retryDelay`` without trying the replica; the change of state is logged
/// once, at warning level.
final class ReplicaReadRouter: Sendable {
    /// The primary's pool: every write, and the reads the replica cannot answer.
    let primary: PostgresClient
    /// The replica's pool.
    let replica: PostgresClient
    private let queries: StoreQueries
    private let maximumWait: Duration
    private let retryDelay: Duration
    private let logger: Logger
    private let observer: (@Sendable (PostgresStore.ReplicaReadSource) -> Void)?
    private let state = Mutex(State())

    /// What the router has learnt so far.
    private struct State {
        /// The reads each server answered.
        var counts = PostgresStore.ReplicaReadCounts()
        /// Set while the replica is out of use (it failed or was behind): until then reads go to the
        /// primary; once past, the next read tries the replica again.
        var restingUntil: ContinuousClock.Instant?
    }

    init(primary: PostgresClient, replica: PostgresClient, queries: StoreQueries, configuration: PostgresStore.Configuration) {
        self.primary = primary
        self.replica = replica
        self.queries = queries
        maximumWait = configuration.replicaWait
        retryDelay = configuration.replicaRetryDelay
        logger = configuration.logger
        observer = configuration.replicaReadObserver
    }

    /// The reads each server has answered.
    var counts: PostgresStore.ReplicaReadCounts { state.withLock { $0.counts } }

    /// Runs `query` on the replica when it has caught up with the primary, else on the primary.
    /// - Throws: What `query` throws on the primary, or what reading the primary's WAL position throws.
    func read<T>(_ query: (PostgresClient) async throws -> T) async throws -> T {
        guard mayTryReplica() else { return try await readFromPrimary(query) }
        let target = try await queries.walInsertPosition(primary, logger: logger)
        let trouble: String
        do {
            switch try await catchUp(to: target) {
            case .reached:
                let value = try await query(replica)
                replicaAnswered()
                return value
            case .behind: trouble = "had not replayed the primary's WAL up to \(target) after \(maximumWait)"
            case .silent: trouble = "did not answer within \(maximumWait)"
            }
        } catch let error where !Task.isCancelled {
            trouble = "failed: \(String(describing: PostgresErrors.wrapping(error, while: "reading from the read replica")))"
        }
        replicaFailed(trouble)
        return try await readFromPrimary(query)
    }

    // MARK: Waiting for the replica

    /// How a wait for the replica ended.
    private enum CatchUp {
        /// The replica has replayed the WAL up to the target.
        case reached
        /// The replica answered, but had not got there when the wait ended.
        case behind
        /// The replica did not answer before the wait ended (it cannot be reached, say).
        case silent
    }

    /// Waits, at most ``maximumWait``, for the replica to replay the WAL up to `target`.
    ///
    /// The wait also bounds getting a connection: the pool of a replica that cannot be reached keeps a
    /// request waiting while it tries to connect again.
    private func catchUp(to target: String) async throws -> CatchUp {
        let deadline = ContinuousClock.now.advanced(by: maximumWait)
        let answered = AnswerFlag()
        return try await withThrowingTaskGroup(of: CatchUp.self) { group in
            group.addTask { try await self.pollReplay(until: target, deadline: deadline, answered: answered) }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return answered.isSet ? .behind : .silent
            }
            defer { group.cancelAll() }
            return try await group.next() ?? .silent
        }
    }

    /// Asks the replica how far it has replayed, with short pauses, until it reaches `target` or `deadline`
    /// passes; sets `answered` at its first answer.
    private func pollReplay(
        until target: String, deadline: ContinuousClock.Instant, answered: AnswerFlag
    ) async throws -> CatchUp {
        var pause = Duration.milliseconds(1)
        while true {
            let reached = try await queries.hasReplayed(upTo: target, replica, logger: logger)
            answered.set()
            if reached { return .reached }
            guard ContinuousClock.now < deadline else { return .behind }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(16))
        }
    }

    // MARK: State

    /// Whether this read may try the replica: while it rests, no; once its rest is over, this read alone
    /// tries it, and the others go on to the primary until this one tells how it went.
    private func mayTryReplica() -> Bool {
        state.withLock { state in
            guard let restingUntil = state.restingUntil else { return true }
            let now = ContinuousClock.now
            guard now >= restingUntil else { return false }
            state.restingUntil = now.advanced(by: retryDelay)
            return true
        }
    }

    /// Runs `query` on the primary and counts it.
    private func readFromPrimary<T>(_ query: (PostgresClient) async throws -> T) async throws -> T {
        let value = try await query(primary)
        count(.primary)
        return value
    }

    /// Counts a read the replica answered, and puts the replica back in use if it was resting.
    private func replicaAnswered() {
        let wasResting = state.withLock { state in
            defer { state.restingUntil = nil }
            return state.restingUntil != nil
        }
        if wasResting { logger.notice("the PostgreSQL read replica answers reads of changes again") }
        count(.replica)
    }

    /// Takes the replica out of use for ``retryDelay``; logs a warning when it was in use.
    private func replicaFailed(_ trouble: String) {
        let wasInUse = state.withLock { state in
            defer { state.restingUntil = ContinuousClock.now.advanced(by: retryDelay) }
            return state.restingUntil == nil
        }
        let message = Logger.Message(
            stringLiteral: "the PostgreSQL read replica \(trouble); reads of changes go to the primary, and try the replica "
                + "again after \(retryDelay)")
        if wasInUse { logger.warning(message) } else { logger.debug(message) }
    }

    /// Counts a read `source` answered, and tells the observer.
    private func count(_ source: PostgresStore.ReplicaReadSource) {
        state.withLock { state in
            switch source {
            case .replica: state.counts.replica += 1
            case .primary: state.counts.primary += 1
            }
        }
        observer?(source)
    }
}

/// Whether a replica has answered during one wait.
private final class AnswerFlag: Sendable {
    private let value = Atomic(false)

    /// Whether it has.
    var isSet: Bool { value.load(ordering: .acquiring) }

    /// Records an answer.
    func set() { value.store(true, ordering: .releasing) }
}

extension StoreQueries {
    /// Where the primary inserts its next WAL record, as PostgreSQL writes an LSN (`0/3000F88`): past the
    /// commit record of every transaction that has committed, even with `synchronous_commit` off.
    func walInsertPosition(_ client: PostgresClient, logger: Logger) async throws -> String {
        var position = ""
        let rows = try await PreparedQueries.run("SELECT pg_current_wal_insert_lsn()::text", on: client, logger: logger)
        for try await row in rows {
            position = try row.decode(String.self)
        }
        return position
    }

    /// Whether the standby of `client` has replayed the WAL up to `position`, so that a statement it starts
    /// now sees every transaction committed before it.
    /// - Throws: ``SyncCore/StoreError/Code/unavailable`` when the server is not a standby, or what the
    ///   database throws.
    func hasReplayed(upTo position: String, _ client: PostgresClient, logger: Logger) async throws -> Bool {
        var answer: (isStandby: Bool, reached: Bool) = (false, false)
        for try await row in try await PreparedQueries.run(
            "SELECT pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn() >= \(position)::pg_lsn, false)", on: client,
            logger: logger)
        {
            answer = try row.decode((Bool, Bool).self)
        }
        guard answer.isStandby else {
            throw StoreError(.unavailable, "the read replica is not a standby (pg_is_in_recovery() is false)")
        }
        return answer.reached
    }
}
