import Synchronization

/// Limits failed logins per account and per client address.
///
/// The rule, for each key (a Basic user name, or a client address):
/// - a failure is a request whose credentials prove no account; requests
///   without credentials are not failures;
/// - after ``Policy/maxFailuresPerAccount`` failures for one user name (or
///   ``Policy/maxFailuresPerAddress`` from one address) the key is locked for
///   ``Policy/firstLockout``; while it is locked, its requests are answered
///   429 with `Retry-After` **without the password being checked**, so a
///   guesser learns nothing and costs the server nothing;
/// - each failure after that, once the lock has passed, locks the key again
///   for twice as long as the last lock, up to ``Policy/maxLockout``;
/// - a success for an account forgets its user name's failures; a key with no
///   failure and no lock for ``Policy/window`` (counted from the end of its
///   last lock) is forgotten too. An address is forgotten only after the
///   window, so a client cannot wash its guesses with an account of its own.
///
/// The lock never lasts more than ``Policy/maxLockout`` after the last
/// failure, so an attacker who stops cannot keep the real user out for
/// longer, and one who goes on is slowed to one guess per ``Policy/maxLockout``. Bearer tokens
/// are not locked per account (they are long and random, not guessable), only
/// per address. Other accounts are unaffected by one account's lock.
///
/// ```swift
/// let throttle = LoginThrottle(policy: .standard, sleeper: ContinuousClock())
/// if let wait = throttle.lockout(user: "ada", address: "10.0.0.7") { /* 429, Retry-After: wait */ }
/// ```
public final class LoginThrottle: Sendable {
    /// How many failures lock a key, and for how long.
    public struct Policy: Sendable, Hashable {
        /// Failures for one user name that lock it; `nil` for no limit per account.
        public var maxFailuresPerAccount: Int?
        /// Failures from one client address that lock it (higher: clients behind one NAT share it);
        /// `nil` for no limit per address — behind a reverse proxy every client has the proxy's address.
        public var maxFailuresPerAddress: Int?
        /// The first lock.
        public var firstLockout: Duration
        /// The longest lock; each lock after the first is twice the last, up to this.
        public var maxLockout: Duration
        /// A key without a failure for this long is forgotten.
        public var window: Duration

        /// Makes a policy.
        public init(
            maxFailuresPerAccount: Int? = 10, maxFailuresPerAddress: Int? = 30, firstLockout: Duration = .seconds(60),
            maxLockout: Duration = .seconds(15 * 60), window: Duration = .seconds(15 * 60)
        ) {
            self.maxFailuresPerAccount = maxFailuresPerAccount.map { max(1, $0) }
            self.maxFailuresPerAddress = maxFailuresPerAddress.map { max(1, $0) }
            self.firstLockout = max(.seconds(1), firstLockout)
            self.maxLockout = max(self.firstLockout, maxLockout)
            self.window = max(.seconds(1), window)
        }

        /// 10 failures per account, 30 per address, locks from 1 minute doubling to 15, forgotten after 15 minutes.
        public static var standard: Policy { Policy() }
    }

    private enum Key: Hashable {
        case user(String)
        case address(String)
    }

    private struct Entry {
        var failures = 0
        var lastFailure: Duration
        var lockedUntil: Duration?
        var lastLockout: Duration?

        /// Whether the key has been quiet — no failure, no lock — for a whole window.
        func isForgotten(at now: Duration, window: Duration) -> Bool {
            now - max(lastFailure, lockedUntil ?? lastFailure) >= window
        }
    }

    /// The policy applied.
    public let policy: Policy
    /// The most keys remembered; past it, the forgotten and then the oldest are dropped.
    public let maxKeys: Int
    private let elapsed: @Sendable () -> Duration
    private let entries = Mutex<[Key: Entry]>([:])

    /// Makes a throttle that reads time from `sleeper` (a `TestClock` in tests).
    public init<C: Clock>(policy: Policy = .standard, sleeper: C, maxKeys: Int = 100_000) where C.Duration == Duration {
        self.policy = policy
        self.maxKeys = max(1, maxKeys)
        let origin = sleeper.now
        self.elapsed = { origin.duration(to: sleeper.now) }
    }

    /// Makes a throttle that reads time from `clock`.
    @available(*, deprecated, renamed: "init(policy:sleeper:maxKeys:)")
    public convenience init<C: Clock>(policy: Policy = .standard, clock: C, maxKeys: Int = 100_000) where C.Duration == Duration {
        self.init(policy: policy, sleeper: clock, maxKeys: maxKeys)
    }

    /// How long the caller must wait before its credentials are checked, or `nil` when they may be checked now.
    /// - Parameters:
    ///   - user: The Basic user name presented, if any.
    ///   - address: The client's address, if known.
    public func lockout(user: String?, address: String?) -> Duration? {
        let now = elapsed()
        let keys = keys(user: user, address: address)
        return entries.withLock { entries in
            var wait: Duration?
            for key in keys {
                guard let entry = entries[key] else { continue }
                if let until = entry.lockedUntil, until > now {
                    wait = max(wait ?? .zero, until - now)
                } else if entry.isForgotten(at: now, window: policy.window) {
                    entries[key] = nil
                }
            }
            return wait
        }
    }

    /// Counts a failed login: credentials that proved no account.
    public func recordFailure(user: String?, address: String?) {
        let now = elapsed()
        entries.withLock { entries in
            for key in keys(user: user, address: address) {
                var entry = entries[key] ?? Entry(lastFailure: now)
                if entry.isForgotten(at: now, window: policy.window) { entry = Entry(lastFailure: now) }
                entry.failures += 1
                entry.lastFailure = now
                let limit: Int
                switch key {
                case .user: limit = policy.maxFailuresPerAccount ?? .max
                case .address: limit = policy.maxFailuresPerAddress ?? .max
                }
                if entry.failures >= limit {
                    let lockout = entry.lastLockout.map { min($0 * 2, policy.maxLockout) } ?? policy.firstLockout
                    entry.lastLockout = lockout
                    entry.lockedUntil = now + lockout
                }
                entries[key] = entry
            }
            if entries.count > maxKeys { prune(&entries, now: now) }
        }
    }

    /// Forgets the failures of `user` after a successful login (not those of its address).
    public func recordSuccess(user: String?) {
        guard let user else { return }
        _ = entries.withLock { $0.removeValue(forKey: .user(user)) }
    }

    private func prune(_ entries: inout [Key: Entry], now: Duration) {
        entries = entries.filter { _, entry in !entry.isForgotten(at: now, window: policy.window) }
        while entries.count > maxKeys, let oldest = entries.min(by: { $0.value.lastFailure < $1.value.lastFailure }) {
            entries[oldest.key] = nil
        }
    }

    private func keys(user: String?, address: String?) -> [Key] {
        var keys: [Key] = []
        if let user, policy.maxFailuresPerAccount != nil { keys.append(.user(user)) }
        if let address, policy.maxFailuresPerAddress != nil { keys.append(.address(address)) }
        return keys
    }
}
