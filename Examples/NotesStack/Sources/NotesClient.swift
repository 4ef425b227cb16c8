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
///     codec: JSONCodec(),
///     configuration: .init(conflictPolicy: .askUser))
/// let id = try await phone.save(title: "Groceries", text: "milk")
/// try await phone.sync()          // answers, pull, push
/// ```
///
/// The client is built on SyncCore's client engine: a ``SyncCore/SyncEndpoint``
/// sends, retries and decodes the `Codable` messages, a ``SyncCore/SyncGate``
/// lets one sync run at a time, the journal (``SyncCore/SyncJournal``) keeps
/// every local change until the server has it, and typed
/// ``SyncCore/MetadataKey``s keep the cursors in the local store.
///
/// ## What the device keeps
/// - each note, as a record of the collection `notes`;
/// - per note, the server revision its copy came from (the base of the next
///   local change);
/// - the journal: one entry per note changed since the server last had it,
///   written in the same transaction as the note, with the version it was
///   based on (the ArchCopy);
/// - the revision the pulls have reached.
///
/// ## A sync
/// 1. carries out the answers the application gave to open conflicts
///    (``SyncCore/SyncStore/answerConflict(_:with:for:)``);
/// 2. pulls the server's changes page by page; a server version of a note
///    with a pending change is judged by the journal, and a conflict is
///    decided by ``Configuration/conflictPolicy`` — or left open for the
///    application when the policy asks the user (``SyncCore/AskUserPolicy``);
/// 3. pushes the pending changes that are ready, each based on the revision
///    it was made from; a change the server took leaves the journal.
///
/// The server's own policy decides only a race: a change another device
/// pushed between this device's pull and its push.
public actor NotesClient {
    /// The local store.
    public nonisolated let store: any SyncStore
    /// The account the notes live under in ``store``.
    public nonisolated let account: AccountID
    /// This device's name, written as ``Note/modifiedBy`` of its changes.
    public nonisolated let device: String
    /// Where the server is mounted, retries, clocks, the conflict policy and the push size.
    public nonisolated let configuration: Configuration
    private nonisolated let endpoint: SyncEndpoint
    private nonisolated let gate = SyncGate()

    /// How a ``NotesClient`` reaches its server and decides conflicts: the settings every
    /// stack's client shares (``SyncCore/SyncClientConfiguration``), read and written by name,
    /// and the notes stack's own. Every setting has a default.
    ///
    /// ```swift
    /// var configuration = NotesClient.Configuration(conflictPolicy: .askUser)
    /// configuration.retry = .none          // a shared setting
    /// configuration.pushSize = 50          // the notes stack's own
    /// ```
    public struct Configuration: StackClientConfiguration {
        /// The shared settings: base path (`/notes` by default), retries, clocks (the wall clock
        /// stamps local changes) and the conflict policy (``NotesMergePolicy`` by default).
        public var client: SyncClientConfiguration
        /// The most changes one push carries (100 by default; ``NotesServer`` takes up to
        /// ``NotesServer/maxChangesPerPush``): more pending changes go up in several pushes.
        public var pushSize: Int

        /// Makes a configuration; every setting left out keeps its default.
        /// - Parameters:
        ///   - basePath: Where the server is mounted.
        ///   - retry: How failures that may pass are retried.
        ///   - clock: The wall clock that stamps local changes.
        ///   - sleeper: The clock the waits between retries are slept on.
        ///   - conflictPolicy: Decides a server version that conflicts with a pending local change.
        ///   - pushSize: The most changes one push carries (at least 1).
        public init(
            basePath: String = "/notes", retry: RetryPolicy = .default, clock: any WallClock = SystemWallClock(),
            sleeper: any Clock<Duration> = ContinuousClock(), conflictPolicy: any ConflictPolicy = NotesMergePolicy(),
            pushSize: Int = 100
        ) {
            self.client = SyncClientConfiguration(
                basePath: basePath, retry: retry, clock: clock, sleeper: sleeper, conflictPolicy: conflictPolicy)
            self.pushSize = max(1, pushSize)
        }
    }

    /// Makes a client.
    /// - Parameters:
    ///   - store: The local store; the journal and the device's cursors are kept in it too.
    ///   - account: The account the notes live under in `store`.
    ///   - device: This device's name, unique among the account's devices.
    ///   - transport: How requests reach the server (add credentials with a middleware).
    ///   - codec: The codec messages travel in.
    ///   - configuration: Where the server is mounted, retries, clocks and the conflict policy.
    public init(
        store: any SyncStore, account: AccountID = "device", device: String, transport: any SyncClientTransport,
        codec: any SyncCodec, configuration: Configuration = .init()
    ) {
        self.store = store
        self.account = account
        self.device = device
        self.configuration = configuration
        self.endpoint = SyncEndpoint(transport: transport, codec: codec, configuration: configuration.client)
    }

    /// What this client's syncs are doing, for a UI (``SyncCore/SyncStatus/states()``).
    public nonisolated var syncStatus: SyncStatus { gate.status }

    // MARK: Local notes

    /// Creates a note, or changes the title and text of the note `id` (its other fields stay).
    /// - Returns: The note's id (a new UUID when `id` is `nil`).
    @discardableResult
    public func save(id: String? = nil, title: String, text: String) async throws -> String {
        let id = id ?? UUID().uuidString
        let others = try await note(id).flatMap { $0.isDeleted ? nil : $0.otherFields }
        try await write(
            Note(id: id, title: title, text: text, modifiedAt: configuration.clock.now(), modifiedBy: device, otherFields: others))
        return id
    }

    /// Writes the note `id` with `fields` (its title and text among them, as strings) as a local change.
    func save(id: String, fields: [String: SyncValue]) async throws {
        var others = fields
        let title = others.removeValue(forKey: "title")?.stringValue ?? ""
        let text = others.removeValue(forKey: "text")?.stringValue ?? ""
        try await write(
            Note(id: id, title: title, text: text, modifiedAt: configuration.clock.now(), modifiedBy: device, otherFields: others))
    }

    /// Deletes the note `id`; the deletion travels like any change.
    public func delete(_ id: String) async throws {
        try await write(
            Note(id: id, title: "", text: "", isDeleted: true, modifiedAt: configuration.clock.now(), modifiedBy: device))
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

    /// The conflicts of notes that wait for the application's answer, in key order. Answer one with
    /// `store.answerConflict(conflict.id, with: .keepMine, for: account)`; the next sync carries it out.
    public func openConflicts() async throws -> [SyncConflict] {
        try await store.openConflicts(for: account).filter { $0.key.collection == Note.collection }
    }

    /// Writes a local change: the note and its journal entry, in one transaction.
    private func write(_ note: Note) async throws {
        try await store.transaction(for: account) { tx in
            let before = try await tx.record(Note.key(note.id))
            // The version the change is based on: the device's copy as it came from the server. (While
            // an earlier change is pending, the journal keeps that change's base instead.)
            let held = try await tx.metadata(DeviceState.revision(of: note.id)).flatMap { revision in
                before.map { ServerNote(note: Note($0.record), revision: revision).version }
            }
            let action: JournalAction = note.isDeleted ? .delete : before == nil ? .add : .modify
            try await tx.put(note.record)
            try await tx.journal.recordLocalChange(action, local: note.record, at: note.modifiedAt, basedOn: held)
        }
    }

    // MARK: Sync

    /// What one sync did.
    public struct Report: Sendable, Hashable {
        /// Notes pushed to the server.
        public var pushed = 0
        /// Server versions written locally: pulled notes, and the server's side of decided conflicts.
        public var pulled = 0
        /// Server versions that met a pending local change and conflicted with it.
        public var conflicts = 0
        /// Conflicts waiting for the application's answer after the sync (``NotesClient/openConflicts()``).
        public var openConflicts = 0

        /// Makes a report.
        public init(pushed: Int = 0, pulled: Int = 0, conflicts: Int = 0, openConflicts: Int = 0) {
            self.pushed = pushed
            self.pulled = pulled
            self.conflicts = conflicts
            self.openConflicts = openConflicts
        }
    }

    /// Carries out the answers given to conflicts, pulls the server's changes, then pushes the local
    /// ones; waits first for a sync already running.
    /// - Throws: ``SyncCore/SyncClientError`` when the server cannot be reached or
    ///   refuses, ``SyncCore/StoreError`` when the local store fails. Every pending
    ///   change stays in the journal for the next sync.
    @discardableResult
    public func sync() async throws -> Report {
        try await gate.run {
            var report = Report()
            report.pulled = try await carryOutAnswers()
            try await pull(into: &report)
            try await push(into: &report)
            report.openConflicts = try await openConflicts().count(where: \.awaitsAnswer)
            return report
        }
    }

    /// How a decision is written: notes as records, stamped by this device.
    private nonisolated var writer: NotesConflictWriter {
        NotesConflictWriter(records: RecordConflictWriter(node: PeerID(device), clock: configuration.clock))
    }

    /// Carries out the application's answers to conflicts of notes.
    /// - Returns: How many server versions were written locally.
    private func carryOutAnswers() async throws -> Int {
        let writer = writer
        return try await store.carryOutAnswers(for: account, where: { $0.key.collection == Note.collection }) { _ in
            writer
        }
    }

    /// Brings the server's changes after the revision the pulls have reached, page by page; a note
    /// with a pending change goes to the journal, which judges the server's version against it.
    private func pull(into report: inout Report) async throws {
        let (endpoint, basePath, policy, writer) = (endpoint, configuration.basePath, configuration.conflictPolicy, writer)
        let start = try await store.transaction(for: account) { tx in
            try await tx.metadata(DeviceState.pulledThrough) ?? .start
        }
        // The next page is on its way while this one is written.
        try await PagedPull.run(from: start) { (after: ChangePosition) -> (page: ChangesAnswer, next: ChangePosition?)? in
            let page = try await endpoint.send(
                endpoint.request(.get, "\(basePath)/changes?after=\(after.rawValue)"), as: ChangesAnswer.self)
            return page.notes.isEmpty ? nil : (page, page.more ? page.cursor : nil)
        } apply: { page in
            let (pulled, conflicts) = try await store.transaction(for: account) { tx in
                var (pulled, conflicts) = (0, 0)
                for server in page.notes {
                    let incoming = server.version
                    if let entry = try await tx.journal.entry(for: incoming.record.key) {
                        // A local change is pending: the journal judges the server's version against it.
                        let outcome = try await tx.journal.take(incoming, pending: entry, policy: policy, writer: writer)
                        if outcome.isConflict { conflicts += 1 }
                        if outcome.wroteServerVersion { pulled += 1 }
                    } else if try await tx.metadata(DeviceState.revision(of: server.note.id)) != server.revision {
                        try await NotesConflictWriter.store(incoming, in: tx)  // nothing pending: take it
                        pulled += 1
                    }  // else the device has it already: its own change, come back
                }
                try await tx.setMetadata(page.cursor, DeviceState.pulledThrough)
                return (pulled, conflicts)
            }
            report.pulled += pulled
            report.conflicts += conflicts
        }
    }

    /// Sends the journal's ready changes of notes, `pushSize` entries read at a time.
    private func push(into report: inout Report) async throws {
        let pushSize = configuration.pushSize
        var after: RecordKey?
        while true {
            // The journal a page at a time; of it, the changes of notes that may be sent (no conflict open).
            let start = after
            let page = try await store.transaction(for: account) { tx in
                try await tx.journal.entries(after: start, limit: pushSize)
            }
            let ready = page.filter { $0.key.collection == Note.collection && $0.isReadyToSend }
            if !ready.isEmpty { try await send(ready, into: &report) }
            guard page.count == pushSize, let last = page.last else { return }
            after = last.key
        }
    }

    /// Sends the changes of `ready` in one push, each based on its ArchCopy's revision, and settles
    /// the journal with the server's answer.
    private func send(_ ready: [JournalEntry], into report: inout Report) async throws {
        let changes = ready.map { NoteChange(note: Note($0.local), base: ServerNote.revision(of: $0.archCopy)) }
        // A push sent twice does no harm (the server recognises a note it
        // already has), so a 500 may be retried too.
        let request = try endpoint.request(.post, configuration.basePath + "/push", body: PushRequest(changes: changes))
        let answer = try await endpoint.send(request, idempotent: true, as: PushAnswer.self)
        let taken = Dictionary(answer.notes.map { ($0.note.id, $0) }, uniquingKeysWith: { _, last in last })
        let (policy, writer) = (configuration.conflictPolicy, writer)
        let (pulled, conflicts) = try await store.transaction(for: account) { tx in
            var (pulled, conflicts) = (0, 0)
            for sent in ready {
                guard let server = taken[sent.key.id.rawValue] else { continue }
                if server.version.hasSameContent(as: sent.local) {
                    // The server took the change: it leaves the journal — unless the note changed
                    // again while the push was in flight, which stays, based on what the server took.
                    if try await tx.journal.acknowledge(sent.key, sequence: sent.sequence, holding: server.version) {
                        try await NotesConflictWriter.store(server.version, in: tx)
                    }
                } else if let entry = try await tx.journal.entry(for: sent.key) {
                    // The server's policy kept another version (another device pushed first): it
                    // meets the pending change like a pulled version.
                    let outcome = try await tx.journal.take(server.version, pending: entry, policy: policy, writer: writer)
                    if outcome.isConflict { conflicts += 1 }
                    if outcome.wroteServerVersion { pulled += 1 }
                }
            }
            return (pulled, conflicts)
        }
        report.pushed += ready.count
        report.pulled += pulled
        report.conflicts += conflicts
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

extension NotesClient.Report: ReportsWaitingConflicts {
    /// The conflicts waiting for an answer after the sync.
    public var conflictsWaiting: Int { openConflicts }
}
