import Foundation
import SyncCore

/// The notes server: keeps every account's notes in a ``SyncCore/SyncStore``
/// and resolves conflicts with a ``SyncCore/ConflictPolicy``.
///
/// ```swift
/// let server = NotesServer(store: MemoryStore(), codecs: CodecSet([JSONCodec()]), conflictPolicy: NotesMergePolicy())
/// let router = ServiceRouter().mounting(server, at: "/notes")
/// ```
///
/// - `GET {mount}/changes?after={revision}` answers the notes written after
///   that revision, a page at a time.
/// - `POST {mount}/push` applies a device's changes in one transaction. A
///   change based on the note's current revision is written as it is; one
///   based on an older revision is a conflict, which the policy decides. The
///   answer holds the server's copy of every note pushed.
public struct NotesServer: SyncService {
    /// Where notes live.
    public let store: any SyncStore
    /// The codecs spoken; the first answers requests that name none.
    public let codecs: CodecSet
    /// Decides conflicts, on the server's side (`local` is the server's note).
    public let conflictPolicy: any ConflictPolicy
    /// The most notes one page of changes carries.
    public let pageSize: Int
    /// The most changes one push may carry.
    public let maxChangesPerPush: Int

    /// Makes a server.
    /// - Parameters:
    ///   - store: Where notes live.
    ///   - codecs: The codecs spoken; the first answers requests that name none.
    ///   - conflictPolicy: Decides conflicts.
    ///   - pageSize: The most notes one page of changes carries.
    ///   - maxChangesPerPush: The most changes one push may carry (413 above it).
    public init(
        store: any SyncStore, codecs: CodecSet, conflictPolicy: any ConflictPolicy, pageSize: Int = 500,
        maxChangesPerPush: Int = 1_000
    ) {
        self.store = store
        self.codecs = codecs
        self.conflictPolicy = conflictPolicy
        self.pageSize = max(1, pageSize)
        self.maxChangesPerPush = max(1, maxChangesPerPush)
    }

    /// Answers `GET changes` and `POST push`.
    public func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        let (input, output) = try codecs.negotiate(contentType: request.contentType, accept: request.accept)
        let store = AccountStore(store, account: context.account)
        switch (request.pathWithoutQuery.dropFirst(context.mountPath.count), request.method) {
        case ("/changes", .get):
            guard let after = UInt64(request.queryItems["after"] ?? "0") else {
                throw SyncServiceError.badRequest("after= must be a revision, a non-negative integer")
            }
            return try Self.answer(try await changes(after: ChangePosition(after), in: store), with: output)
        case ("/push", .post):
            let push = try Self.read(PushRequest.self, from: request.body, with: input)
            guard push.changes.count <= maxChangesPerPush else {
                throw SyncServiceError(status: 413, message: "a push may carry at most \(maxChangesPerPush) changes")
            }
            return try Self.answer(try await apply(push.changes, in: store), with: output)
        case ("/changes", _), ("/push", _):
            throw SyncServiceError.methodNotAllowed("changes is GET, push is POST")
        default:
            throw SyncServiceError.notFound("no notes resource at \(request.pathWithoutQuery)")
        }
    }

    // MARK: Changes

    private func changes(after revision: ChangePosition, in store: AccountStore) async throws -> ChangesAnswer {
        let page = try await store.changes(after: revision, in: [Note.collection], limit: pageSize)
        return ChangesAnswer(
            notes: page.records.map { ServerNote(note: Note($0.record), revision: $0.position) },
            cursor: page.lastPosition, more: page.hasMore)
    }

    // MARK: Push

    private func apply(_ changes: [NoteChange], in store: AccountStore) async throws -> PushAnswer {
        for change in changes where change.note.id.isEmpty {
            throw SyncServiceError.unprocessable("a note needs an id")
        }
        let policy = conflictPolicy
        let conflicts = try await store.transaction { tx in
            var conflicts = 0
            for change in changes {
                let incoming = change.note.record
                guard let stored = try await tx.record(incoming.key), stored.position != change.base else {
                    try await tx.put(incoming)  // new, or based on the current revision
                    continue
                }
                if stored.record == incoming { continue }  // a push sent again after a lost answer
                conflicts += 1
                let conflict = Conflict(local: stored.record, remote: incoming, resolvingSide: .server)
                switch await policy.resolve(conflict) {
                case .keepLocal, .deferred:
                    break  // the server's note stays; the device takes it from the answer
                case .takeRemote:
                    try await tx.put(incoming)
                case .merged(let merged):
                    try await tx.put(merged)
                case .keepBoth:
                    var copy = incoming  // the device's version survives as a new note
                    copy.id = RecordID(TimeOrderedUUID.make().uuidString)
                    try await tx.put(copy)
                }
            }
            return conflicts
        }
        // Revisions are given when the transaction commits, so read them back.
        let notes = try await store.transaction { tx in
            var notes: [ServerNote] = []
            for change in changes {
                if let stored = try await tx.record(Note.key(change.note.id)) {
                    notes.append(ServerNote(note: Note(stored.record), revision: stored.position))
                }
            }
            return notes
        }
        return PushAnswer(notes: notes, conflicts: conflicts)
    }

    // MARK: Messages

    /// Decodes a request body into a message; content that does not fit is a 400.
    private static func read<Message: Decodable>(
        _ type: Message.Type, from body: [UInt8], with codec: any SyncCodec
    ) throws -> Message {
        let value = try codec.decode(body)  // a CodecError becomes 400 on its own
        do {
            return try SyncValueDecoder().decode(type, from: value)
        } catch {
            throw SyncServiceError.badRequest("the body is not a \(Message.self): \(error)")
        }
    }

    /// Encodes a message as a 200 answer in `codec`.
    private static func answer(_ message: some Encodable, with codec: any SyncCodec) throws -> SyncResponse {
        try .encoded(try SyncValueEncoder().encode(message), with: codec)
    }
}
