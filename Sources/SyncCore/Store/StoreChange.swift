import Synchronization

/// A committed transaction that wrote records, as a store announces it:
/// the account, the collections written, and the device that wrote them.
///
/// A push server listens to these (``ChangeNotifyingStore/changeNotifications()``)
/// to notify the devices that monitor the changed collections, except the
/// one that wrote. The writer is whatever ``StoreChange/writer`` names
/// around the transaction — a server sets it from the request's device
/// (`SyncRequest.device`) before the stack runs:
///
/// ```swift
/// try await StoreChange.$writer.withValue("phone-7") {
///     try await store.transaction(for: "ada") { tx in try await tx.put(record) }
/// }   // announced as StoreChange(account: "ada", collections: [record.collection], device: "phone-7")
/// ```
public struct StoreChange: Sendable, Hashable, CustomStringConvertible {
    /// The account whose records changed.
    public var account: AccountID
    /// The collections written, or `nil` when the store could not say (every collection may have changed).
    public var collections: Set<CollectionID>?
    /// The device that wrote, when the transaction ran with a ``writer`` set.
    public var device: String?

    /// Makes a change.
    public init(account: AccountID, collections: Set<CollectionID>?, device: String? = nil) {
        self.account = account
        self.collections = collections
        self.device = device
    }

    /// The device on whose behalf the transactions started inside `withValue` write; stores
    /// put it in the ``StoreChange`` they announce. `nil` (the default) for writes of no device.
    @TaskLocal public static var writer: String?

    /// `account: collections (by device)`.
    public var description: String {
        let names = collections.map { $0.map(\.rawValue).sorted().joined(separator: ", ") } ?? "every collection"
        return "\(account): \(names)" + (device.map { " (by \($0))" } ?? "")
    }

    /// The change a commit of record writes to `keys` announces, with the current ``writer``;
    /// `nil` when no record was written.
    package static func committing(_ keys: some Sequence<RecordKey>, of account: AccountID) -> StoreChange? {
        let collections = Set(keys.map(\.collection))
        guard !collections.isEmpty else { return nil }
        return StoreChange(account: account, collections: collections, device: writer)
    }
}

/// A store that announces every commit that writes records.
///
/// `MemoryStore` and `SQLiteStore` announce commits made through the same
/// store object (in this process); `PostgresStore` announces commits of every
/// process writing to its database, through `LISTEN/NOTIFY`.
public protocol ChangeNotifyingStore: SyncStore {
    /// The commits that write records from now on.
    ///
    /// Returns once listening has started: every commit that ends after this
    /// returns is announced. The stream finishes when the store can no longer
    /// listen (a lost database connection); commits made while nobody listened
    /// are not announced, so a listener that calls again must assume it missed some.
    /// - Throws: ``StoreError`` when the store cannot start listening.
    func changeNotifications() async throws -> AsyncStream<StoreChange>
}

/// Hands each announced ``StoreChange`` to every listener: the in-process
/// announcement of `MemoryStore` and `SQLiteStore`, usable by any store.
///
/// Each listener's stream keeps at most `bufferLimit` changes it has not
/// read yet; when a listener falls that far behind, its stream finishes (it
/// then knows it missed changes, as after a lost database connection).
public final class StoreChangeBroadcaster: Sendable {
    private struct Listener: Sendable {
        let continuation: AsyncStream<StoreChange>.Continuation
    }

    private let listeners = Mutex<[Int: Listener]>([:])
    private let nextID = Atomic<Int>(0)
    /// The most unread changes a listener may have before its stream finishes.
    public let bufferLimit: Int

    /// Makes a broadcaster with no listener.
    public init(bufferLimit: Int = 65_536) {
        self.bufferLimit = max(1, bufferLimit)
    }

    /// A stream of the changes announced from now on.
    public func changes() -> AsyncStream<StoreChange> {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .bufferingOldest(bufferLimit))
        continuation.onTermination = { [weak self] _ in
            _ = self?.listeners.withLock { $0.removeValue(forKey: id) }
        }
        listeners.withLock { $0[id] = Listener(continuation: continuation) }
        return stream
    }

    /// Hands `change` to every listener.
    public func announce(_ change: StoreChange) {
        let current = listeners.withLock { Array($0.values) }
        for listener in current {
            if case .dropped = listener.continuation.yield(change) { listener.continuation.finish() }
        }
    }

    /// How many listen now.
    public var listenerCount: Int { listeners.withLock { $0.count } }
}
