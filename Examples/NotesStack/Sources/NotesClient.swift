import Foundation
import SyncCore

/// A device of the notes stack: keeps notes in a local ``SyncCore/SyncStore``,
/// readable and writable without the network, and syncs them with a
/// ``NotesServer``.
///
/// ```swift
/// let phone = NotesClient(
///     store: MemoryStore(), device: "phone",
///     transport: HTTPClientTransport(baseURL: serverURL)
///         .with(CredentialsMiddleware(.basic(username: "ada", password: "secret"))),
///     codec: JSONCodec())
/// let id = try await phone.save(title: "Groceries", text: "milk")
/// try await phone.sync()          // push, then pull
/// ```
///
/// The client is built on SyncCore's client engine: a ``SyncCore/SyncEndpoint``
/// sends, retries and decodes the `Codable` messages, a ``SyncCore/SyncGate``
/// lets one sync run at a time, and typed ``SyncCore/MetadataKey``s keep the
/// cursors in the local store.
///
/// ## What the device keeps
/// - each note, as a record of the collection `notes`;
/// - per note, the server revision its copy came from (the base of the next
///   change pushed);
/// - an *outbox*: one marker per note changed since it was last pushed;
/// - the revision the pulls have reached.
///
/// A local write puts the note and its marker in one transaction, so no
/// change is ever forgotten. A pull never overwrites a note with a marker:
/// that note goes up with the next push, based on the revision the device
/// had, and the server's ``SyncCore/ConflictPolicy`` decides.
public actor NotesClient {
    /// The local store.
    public nonisolated let store: any SyncStore
    /// The account the notes live under in ``store``.
    public nonisolated let account: AccountID
    /// This device's name, written as ``Note/modifiedBy`` of its changes.
    public nonisolated let device: String
    /// How the client reaches the server and paces its retries.
    public nonisolated let configuration: Configuration
    private nonisolated let endpoint: SyncEndpoint
    private nonisolated let gate = SyncGate()

    /// How a ``NotesClient`` reaches its server: the settings every stack's
    /// client has, under the same names. Every setting has a default.
    ///
    /// ```swift
    /// let configuration = NotesClient.Configuration(retry: .none)
    /// ```
    public struct Configuration: Sendable {
        /// Where the server is mounted (`/notes` by default).
        public var basePath: String
        /// How requests that failed for a reason that may pass are retried.
        public var retry: RetryPolicy
        /// The wall clock that stamps local changes.
        public var clock: any WallClock
        /// The clock the waits between retries are slept on: a test passes a `TestClock`.
        public var sleeper: any Clock<Duration>

        /// Makes a configuration; every setting left out keeps its default.
        /// - Parameters:
        ///   - basePath: Where the server is mounted.
        ///   - retry: How failures that may pass are retried.
        ///   - clock: The wall clock that stamps local changes.
        ///   - sleeper: The clock the waits between retries are slept on.
        public init(
            basePath: String = "/notes", retry: RetryPolicy = .default, clock: any WallClock = SystemWallClock(),
            sleeper: any Clock<Duration> = ContinuousClock()
        ) {
            self.basePath = basePath
            self.retry = retry
            self.clock = clock
            self.sleeper = sleeper
        }
    }

    /// Makes a client.
    /// - Parameters:
    ///   - store: The local store; the device's cursors are kept in it too.
    ///   - account: The account the notes live under in `store`.
    ///   - device: This device's name, unique among the account's devices.
    ///   - transport: How requests reach the server (add credentials with a middleware).
    ///   - codec: The codec messages travel in.
    ///   - configuration: Where the server is mounted, retries and clocks.
    public init(
        store: any SyncStore, account: AccountID = "device", device: String, transport: any SyncClientTransport,
        codec: any SyncCodec, configuration: Configuration = .init()
    ) {
        self.store = store
        self.account = account
        self.device = device
        self.configuration = configuration
        self.endpoint = SyncEndpoint(
            transport: transport, codecs: CodecSet([codec]), retry: configuration.retry, clock: configuration.sleeper)
    }

    private nonisolated var basePath: String { configuration.basePath }
    private nonisolated var clock: any WallClock { configuration.clock }

    // MARK: Local notes

    /// Creates a note, or changes the note `id`.
    /// - Returns: The note's id (a new UUID when `id` is `nil`).
    @discardableResult
    public func save(id: String? = nil, title: String, text: String) async throws -> String {
        let id = id ?? UUID().uuidString
        try await write(Note(id: id, title: title, text: text, modifiedAt: clock.now(), modifiedBy: device))
        return id
    }

    /// Deletes the note `id`; the deletion travels like any change.
    public func delete(_ id: String) async throws {
        try await write(Note(id: id, title: "", text: "", isDeleted: true, modifiedAt: clock.now(), modifiedBy: device))
    }

    /// The note `id`, deleted or not, or `nil` if this device never saw it.
    public func note(_ id: String) async throws -> Note? {
        try await store.transaction(for: account) { tx in try await tx.record(Note.key(id)).map { Note($0.record) } }
    }

    /// The notes that are not deleted, in id order.
    public func notes() async throws -> [Note] {
        try await store.transaction(for: account) { tx in
            var notes: [Note] = []
            for try await stored in tx.allRecords(in: Note.collection) where !stored.record.isDeleted {
                notes.append(Note(stored.record))
            }
            return notes
        }
    }

    /// Writes a local change: the note and its outbox marker, in one transaction.
    private func write(_ note: Note) async throws {
        try await store.transaction(for: account) { tx in
            try await tx.put(note.record)
            try await tx.put(Outbox.marker(for: note))
        }
    }

    // MARK: Sync

    /// What one sync did.
    public struct Report: Sendable, Hashable {
        /// Notes pushed to the server.
        public var pushed = 0
        /// Notes pulled from the server and written locally.
        public var pulled = 0
        /// Pushed notes that conflicted with a change from another device.
        public var conflicts = 0

        /// Makes a report.
        public init(pushed: Int = 0, pulled: Int = 0, conflicts: Int = 0) {
            self.pushed = pushed
            self.pulled = pulled
            self.conflicts = conflicts
        }
    }

    /// Pushes local changes, then pulls the server's; waits first for a sync already running.
    /// - Throws: ``SyncCore/SyncClientError`` when the server cannot be reached or
    ///   refuses, ``SyncCore/StoreError`` when the local store fails.
    @discardableResult
    public func sync() async throws -> Report {
        try await gate.run {
            var report = Report()
            try await push(into: &report)
            try await pull(into: &report)
            return report
        }
    }

    private func push(into report: inout Report) async throws {
        let changes = try await store.transaction(for: account) { tx in
            var changes: [NoteChange] = []
            for try await marker in tx.allRecords(in: Outbox.collection) {
                let id = marker.record.id.rawValue
                guard let stored = try await tx.record(Note.key(id)) else { continue }
                let base = try await tx.metadata(DeviceState.revision(of: id)) ?? .start
                changes.append(NoteChange(note: Note(stored.record), base: base))
            }
            return changes
        }
        guard !changes.isEmpty else { return }
        // A push sent twice does no harm (the server recognises a note it
        // already has), so a 500 may be retried too.
        let request = try endpoint.request(.post, basePath + "/push", body: PushRequest(changes: changes))
        let answer = try await endpoint.send(request, idempotent: true, as: PushAnswer.self)

        let sent = Dictionary(changes.map { ($0.note.id, $0.note) }, uniquingKeysWith: { _, last in last })
        try await store.transaction(for: account) { tx in
            for server in answer.notes {
                let id = server.note.id
                guard let note = sent[id] else { continue }
                if try await tx.record(Note.key(id)).map({ Note($0.record) }) == note {
                    // Not edited while the push was in flight: take the server's copy.
                    try await tx.put(server.note.record)
                    try await tx.setMetadata(server.revision, DeviceState.revision(of: id))
                    try await tx.purge(Outbox.key(id))
                } else if server.note.hasSameContent(as: note) {
                    // Edited again on top of what the server took: that is the next base.
                    try await tx.setMetadata(server.revision, DeviceState.revision(of: id))
                }
            }
        }
        report.pushed += changes.count
        report.conflicts += answer.conflicts
    }

    private func pull(into report: inout Report) async throws {
        var more = true
        while more {
            let cursor = try await store.transaction(for: account) { tx in
                try await tx.metadata(DeviceState.pulledThrough) ?? .start
            }
            let page = try await endpoint.send(
                endpoint.request(.get, "\(basePath)/changes?after=\(cursor.rawValue)"), as: ChangesAnswer.self)
            report.pulled += try await store.transaction(for: account) { tx in
                var pulled = 0
                for server in page.notes {
                    let id = server.note.id
                    if try await tx.record(Outbox.key(id)) != nil { continue }  // local change waits to go up
                    if try await tx.metadata(DeviceState.revision(of: id)) == server.revision { continue }  // have it
                    try await tx.put(server.note.record)
                    try await tx.setMetadata(server.revision, DeviceState.revision(of: id))
                    pulled += 1
                }
                try await tx.setMetadata(page.cursor, DeviceState.pulledThrough)
                return pulled
            }
            more = page.more
        }
    }
}

/// The device's sync state, as typed metadata keys of the peer `notes.device`.
enum DeviceState {
    static let peer: PeerID = "notes.device"
    /// The server revision the pulls have reached.
    static let pulledThrough = MetadataKey<ChangePosition>("pulledThrough", peer: peer)

    /// The server revision the device's copy of note `id` came from.
    static func revision(of id: String) -> MetadataKey<ChangePosition> {
        MetadataKey("revision/" + id, peer: peer)
    }
}

/// The notes changed since they were last pushed: one marker record per note.
enum Outbox {
    static let collection: CollectionID = "notes.outbox"

    static func key(_ id: String) -> RecordKey { RecordKey(collection: collection, id: RecordID(id)) }

    static func marker(for note: Note) -> SyncRecord {
        SyncRecord(collection: collection, id: RecordID(note.id), version: note.record.version)
    }
}
