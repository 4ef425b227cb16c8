/// The change sequence of an account after a position, page by page, as an
/// async sequence: each element is a ``ChangeBatch`` of at most `pageSize`
/// records, and the sequence ends after the page that has no more behind it.
///
/// ```swift
/// var reached = cursor
/// for try await page in store.changePages(for: account, after: cursor) {
///     for stored in page.records { … }
///     reached = page.lastPosition
/// }
/// ```
///
/// Each page is read when it is asked for, so changes committed while the
/// sequence runs appear in a later page. When there is no change at all, the
/// sequence yields one empty page whose ``ChangeBatch/lastPosition`` is
/// the position asked after.
public struct ChangePages: AsyncSequence, Sendable {
    /// A page of changes.
    public typealias Element = ChangeBatch
    /// What reading a page throws.
    public typealias Failure = any Error

    /// The store read.
    public let store: any SyncStore
    /// The account whose changes are read.
    public let account: AccountID
    /// The position the first page starts after.
    public let start: ChangePosition
    /// The collections read, or `nil` for all.
    public let collections: Set<CollectionID>?
    /// The most records in one page.
    public let pageSize: Int

    /// Makes the sequence; `pageSize` is at least 1.
    public init(
        store: any SyncStore, account: AccountID, after start: ChangePosition, in collections: Set<CollectionID>?,
        pageSize: Int
    ) {
        self.store = store
        self.account = account
        self.start = start
        self.collections = collections
        self.pageSize = Swift.max(1, pageSize)
    }

    /// Reads the pages one by one.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let pages: ChangePages
        var nextStart: ChangePosition?

        /// The next page, or `nil` after the last one.
        /// - Throws: ``StoreError`` when the store cannot be read.
        public mutating func next() async throws -> ChangeBatch? {
            guard let after = nextStart else { return nil }
            let batch = try await pages.store.changes(
                for: pages.account, after: after, in: pages.collections, limit: pages.pageSize)
            nextStart = batch.hasMore ? batch.lastPosition : nil
            return batch
        }
    }

    /// An iterator from ``start``.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pages: self, nextStart: start) }
}

/// The records of one collection in id order, tombstones included, read in
/// pages inside a transaction, as an async sequence of ``StoredRecord``s.
///
/// ```swift
/// try await store.transaction(for: account) { tx in
///     for try await stored in tx.allRecords(in: "appsync/booking") { … }
/// }
/// ```
public struct CollectionRecords: AsyncSequence, Sendable {
    /// A stored record.
    public typealias Element = StoredRecord
    /// What reading a page throws.
    public typealias Failure = any Error

    /// The transaction read through.
    public let transaction: any StoreTransaction
    /// The collection read.
    public let collection: CollectionID
    /// The most records read at once.
    public let pageSize: Int

    /// Makes the sequence; `pageSize` is at least 1.
    public init(transaction: any StoreTransaction, collection: CollectionID, pageSize: Int) {
        self.transaction = transaction
        self.collection = collection
        self.pageSize = Swift.max(1, pageSize)
    }

    /// Reads the records a page at a time.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let records: CollectionRecords
        var page: [StoredRecord] = []
        var index = 0
        var after: RecordID?
        var finished = false

        /// The next record, or `nil` after the last one.
        /// - Throws: ``StoreError`` when the store cannot be read.
        public mutating func next() async throws -> StoredRecord? {
            if index == page.count {
                guard !finished else { return nil }
                page = try await records.transaction.records(
                    in: records.collection, after: after, limit: records.pageSize)
                index = 0
                finished = page.count < records.pageSize
                after = page.last?.record.id
                guard !page.isEmpty else { return nil }
            }
            defer { index += 1 }
            return page[index]
        }
    }

    /// An iterator from the collection's first record.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(records: self) }
}

extension SyncStore {
    /// The changes of `account` after `position`, page by page; see ``ChangePages``.
    public func changePages(
        for account: AccountID, after position: ChangePosition, in collections: Set<CollectionID>? = nil,
        pageSize: Int = 1_000
    ) -> ChangePages {
        ChangePages(store: self, account: account, after: position, in: collections, pageSize: pageSize)
    }
}

extension AccountStore {
    /// This account's changes after `position`, page by page; see ``ChangePages``.
    public func changePages(
        after position: ChangePosition, in collections: Set<CollectionID>? = nil, pageSize: Int = 1_000
    ) -> ChangePages {
        store.changePages(for: account, after: position, in: collections, pageSize: pageSize)
    }
}

extension StoreTransaction {
    /// Every record of `collection` in id order, read `pageSize` at a time; see ``CollectionRecords``.
    public func allRecords(in collection: CollectionID, pageSize: Int = 1_000) -> CollectionRecords {
        CollectionRecords(transaction: self, collection: collection, pageSize: pageSize)
    }
}
