extension SQLiteStore {
    /// How a ``SQLiteStore`` opens and uses its database.
    ///
    /// ```swift
    /// var configuration = SQLiteStore.Configuration()
    /// configuration.durability = .normal   // a cache that may lose its last commits on power loss
    /// let store = try SQLiteStore(path: "cache.sqlite", configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// When a commit reaches the disk; ``Durability/full`` unless changed.
        public var durability: Durability
        /// How long a write waits for another process that holds the database's write lock
        /// before failing with ``SyncCore/StoreError/Code/conflict``.
        public var busyTimeout: Duration
        /// How many reading connections the store keeps open at most (a file database).
        public var maximumReaderCount: Int
        /// How many times a transaction runs its body when another process keeps
        /// changing the same account before it can commit; at least 1.
        public var maximumAttempts: Int
        /// The most bytes the database file may take, or `nil` for no limit but
        /// the disk's (SQLite's `max_page_count`, counted in 4 KiB pages). A
        /// write that would pass it fails with ``SyncCore/StoreError/Code/storageFull``,
        /// as on a full disk, and stores nothing; open the store again with a
        /// larger limit to go on. For a device that must leave room to others.
        public var maximumSize: Int?
        /// How many 4 KiB pages the write-ahead log may hold; at least 1.
        ///
        /// A file store copies the log into the database file mostly on a connection of its own, beside
        /// the commits: a passive checkpoint each time the log grew by an eighth of the mark. The commit
        /// that brings the log to the mark copies the rest itself (SQLite's `wal_autocheckpoint` does all
        /// of it there, holding up every commit behind it), and the next commit starts the log again from
        /// its beginning, as it does after any copy that reached the log's end.
        ///
        /// 4,000 (16 MiB) by default, four times SQLite's own: a server that commits thousands of small
        /// transactions a second rewrites the same pages (an account's row, the ends of its indexes) many
        /// times between copies, so fewer, larger copies cost less in all. A device short of disk space
        /// may lower it; the log file keeps the largest size it reached.
        public var checkpointPages: Int

        /// Makes a configuration.
        /// - Parameters:
        ///   - durability: when a commit reaches the disk.
        ///   - busyTimeout: how long to wait for another process's write lock.
        ///   - maximumReaderCount: the most reading connections open at once.
        ///   - maximumAttempts: how many times a transaction body runs before giving up on conflicts.
        ///   - maximumSize: the most bytes the database file may take; `nil` for no limit.
        ///   - checkpointPages: the most pages the write-ahead log holds; copied into the database file beside the commits.
        public init(
            durability: Durability = .full,
            busyTimeout: Duration = .seconds(10),
            maximumReaderCount: Int = 5,
            maximumAttempts: Int = 10,
            maximumSize: Int? = nil,
            checkpointPages: Int = 4_000
        ) {
            self.checkpointPages = max(1, checkpointPages)
            self.maximumSize = maximumSize
            self.durability = durability
            self.busyTimeout = busyTimeout
            self.maximumReaderCount = maximumReaderCount
            self.maximumAttempts = maximumAttempts
        }
    }

    /// When a committed transaction reaches the disk: the value of SQLite's
    /// `PRAGMA synchronous` in write-ahead-log mode.
    ///
    /// Both levels survive the process being killed at any point (`SIGKILL`,
    /// a crash): a transaction that committed is there after reopening, one
    /// that did not is not. They differ on power loss and operating-system
    /// crashes only.
    public struct Durability: Hashable, Sendable, CustomStringConvertible {
        /// The `PRAGMA synchronous` value.
        let pragmaValue: String

        /// Every commit is flushed to the disk before the transaction returns
        /// (`synchronous = FULL`): a committed transaction survives power loss.
        ///
        /// The default, because a sync store hands out positions: when the
        /// last commits vanish on power loss, their positions are handed out
        /// again to different writes, and a peer that had already read the
        /// lost ones would silently skip the new ones.
        public static let full = Durability(pragmaValue: "FULL")

        /// Commits are flushed at checkpoints only (`synchronous = NORMAL`):
        /// faster, still consistent after power loss, but the last commits
        /// before it may be rolled back. For caches and for data that can be
        /// fetched again.
        public static let normal = Durability(pragmaValue: "NORMAL")

        /// The `PRAGMA synchronous` value, `FULL` or `NORMAL`.
        public var description: String { pragmaValue }
    }
}
