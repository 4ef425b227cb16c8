import Synchronization

/// A client whose records can be observed: ``ModelRecords`` kept in a store that announces its
/// commits (``ChangeNotifyingStore``: `MemoryStore`, `SQLiteStore`, `PostgresStore`).
public protocol ObservableModelRecords: ModelRecords {
    /// The store the client keeps its records in.
    var store: any SyncStore { get }
    /// The account its records are under in that store.
    var account: AccountID { get }
    /// The collection the records of `kind` are stored in.
    func collection(ofKind kind: String) -> CollectionID
}

extension ObservableModelRecords {
    /// The records of `Model` (those `isIncluded` accepts), now and after every change to them: a local
    /// save or delete, or a sync that brought changes.
    ///
    /// ```swift
    /// for try await contacts in client.observe(Contact.self) {
    ///     show(contacts)        // at once, then after each change
    /// }
    /// ```
    ///
    /// The first value comes at once. After that, each commit that writes the model's collection makes
    /// one new value; commits that come while the consumer is busy are coalesced into one (a pull of
    /// 10,000 records is one value, and so are a hundred saves made while the consumer was away). The
    /// records are read in a transaction of their own that ends before the value is handed over, so a
    /// slow consumer holds nothing. The sequence ends when the consuming task is cancelled.
    ///
    /// Only commits of this process are announced: a change another process makes to the same SQLite
    /// file shows with the next change made here (or a new `observe`).
    /// - Throws: (from the iteration) ``StoreError`` `.invalidArgument` when the store does not announce
    ///   its commits; ``ModelDecodingError`` for a record the type cannot read; what the store throws.
    public func observe<Model: SyncModel>(
        _ type: Model.Type, where isIncluded: @escaping @Sendable (Model) -> Bool = { _ in true }
    ) -> ModelObservation<Model> {
        ModelObservation(
            store: store, account: account, collection: collection(ofKind: Model.modelName),
            read: { [self] in try await all(Model.self).filter(isIncluded) })
    }
}

/// The values of ``ObservableModelRecords/observe(_:where:)``: the current records of a model, then the
/// records again after each change to them, coalesced.
public struct ModelObservation<Model: SyncModel>: AsyncSequence, Sendable {
    /// The records of one moment.
    public typealias Element = [Model]

    let store: any SyncStore
    let account: AccountID
    let collection: CollectionID
    let read: @Sendable () async throws -> [Model]

    /// Makes the observation of a model's records, as a client of its own stack offers it
    /// (``ObservableModelRecords`` gives it for free).
    /// - Parameters:
    ///   - store: The store the records are kept in; it must announce its commits (``ChangeNotifyingStore``).
    ///   - account: The account the records are under.
    ///   - collection: The collection whose commits make a new value.
    ///   - read: Reads the model's records now (in a transaction of its own).
    public init(
        store: any SyncStore, account: AccountID, collection: CollectionID, read: @escaping @Sendable () async throws -> [Model]
    ) {
        self.store = store
        self.account = account
        self.collection = collection
        self.read = read
    }

    /// Makes an iterator; each iterator listens on its own.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(observation: self)
    }

    /// Yields the records at once, then after each change.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let observation: ModelObservation
        var signals: AsyncStream<Void>.AsyncIterator?
        var listening: Listening?

        /// The records now (the first call), else once they changed; `nil` once the task is cancelled.
        public mutating func next() async throws -> [Model]? {
            guard !Task.isCancelled else { return nil }
            guard var waiting = signals else {
                let (stream, listening) = try await Listening.start(observation)
                self.signals = stream.makeAsyncIterator()
                self.listening = listening
                return try await observation.read()
            }
            let signal: Void? = await waiting.next()
            signals = waiting
            guard signal != nil, !Task.isCancelled else { return nil }
            return try await observation.read()
        }
    }

    /// One iterator's listener: it turns the store's announcements of the collection into signals, at
    /// most one waiting (so changes that come while the consumer is busy count as one), and stops when
    /// the iterator goes away.
    final class Listening: Sendable {
        private let listener: Task<Void, Never>

        private init(listener: Task<Void, Never>) { self.listener = listener }

        deinit { listener.cancel() }

        /// Starts listening before the first read, so no change after that read is missed.
        static func start(_ observation: ModelObservation) async throws -> (AsyncStream<Void>, Listening) {
            guard let notifying = observation.store as? any ChangeNotifyingStore else {
                throw StoreError(.invalidArgument, "the store does not announce its commits, so its records cannot be observed")
            }
            let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let first = try await notifying.changeNotifications()
            let listener = Task {
                var changes = first
                while !Task.isCancelled {
                    for await change in changes
                    where change.account == observation.account
                        && (change.collections?.contains(observation.collection) ?? true)
                    {
                        signal.yield()
                    }
                    // The announcements ended: the listener fell behind or the store lost its listening.
                    // Changes may have been missed, so listen again and say the records may have changed.
                    guard !Task.isCancelled, let again = try? await notifying.changeNotifications() else { break }
                    changes = again
                    signal.yield()
                }
                signal.finish()
            }
            return (signals, Listening(listener: listener))
        }
    }
}
