import Foundation
import SyncCore

/// Keeps OTA sessions in the server's store, in the account's per-peer
/// metadata, so that any server process on the store continues any session:
/// a device's next message may reach another process (a load balancer
/// without sticky sessions, a process restarted mid-session).
///
/// Under the peer `ota-session:<id>`:
///
/// | key | what |
/// |---|---|
/// | `ota.session` | the session (``OTAServerSession``): each dataclass's phase, anchors and push cursor, the sequence numbers, the answers kept |
/// | `ota.session.items.<dataclass>.<n>` | the device's items of the n-th message of the dataclass's pull, until the mingle |
/// | `ota.session.unchanged.<dataclass>` | the records a slow sync found unchanged on the device, not sent back |
/// | `ota.session.reply.<sequence>` | the answer to message `sequence`, for a repeat (the last ``keptReplies``) |
///
/// and under the device's peer `ota-device:<deviceid>`, `ota.sessions` lists
/// the device's sessions, so that a new session removes the device's finished
/// and expired ones.
///
/// A message is processed on the session as read, and the new session is
/// written with the answer in one transaction that first checks that no other
/// process kept an answer to that message meanwhile (``commit(_:after:reply:sequence:expiredBefore:)``).
/// What the processing wrote to the store before — id maps, device info, the
/// mingle — is safe to write again: a mingle that finds the device's items
/// already applied skips them, and a slow sync's new generation is the same in
/// every process (``OTAServerSession/newGeneration(for:)``).
struct OTAServerSessionStore: Sendable {
    let store: any SyncStore

    /// How many answers per session are kept for repeated messages.
    static let keptReplies = 4

    static func peer(_ session: String) -> PeerID { PeerID("ota-session:\(session)") }

    /// Whether `cookie` may be a session id the server made (a UUID): anything else names no session.
    static func isSessionID(_ cookie: String) -> Bool {
        cookie.utf8.count <= 64 && !cookie.isEmpty
            && cookie.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }
    }
    static let stateKey = "ota.session"
    static func itemsKey(_ uri: String, _ chunk: Int) -> String { "ota.session.items.\(uri).\(chunk)" }
    static func unchangedKey(_ uri: String) -> String { "ota.session.unchanged.\(uri)" }
    static func replyKey(_ sequence: Int) -> String { "ota.session.reply.\(sequence)" }
    /// The sessions of a device, under its peer.
    static let deviceSessionsKey = "ota.sessions"

    /// The session `id` of `account` as last kept, or nil when there is none, it is unreadable, or it
    /// has been idle since before `expiredBefore`.
    func load(_ id: String, account: AccountID, expiredBefore: Date) async throws -> OTAServerSession? {
        let peer = Self.peer(id)
        return try await store.transaction(for: account) { tx in
            guard let stored = try await tx.metadata(Self.stateKey, for: peer),
                var session = OTAServerSession(stored, id: id, account: account),
                session.lastActivity >= expiredBefore
            else { return nil }
            for uri in session.syncs.keys where DataclassSync.hasUnchanged(stored["syncs"]?[uri]) {
                let ids = try await tx.metadata(Self.unchangedKey(uri), for: peer)?.arrayValue ?? []
                session.syncs[uri]?.unchangedOnDevice = Set(ids.compactMap(\.stringValue).map(RecordID.init(rawValue:)))
            }
            return session
        }
    }

    /// The device's items of `sync` kept from earlier messages of the session, in the order they came.
    func storedItems(of sync: DataclassSync, session: OTAServerSession) async throws -> [(id: String, item: OTAItem)] {
        guard sync.storedChunks > 0 else { return [] }
        let (peer, uri, chunks) = (Self.peer(session.id), sync.uri, sync.storedChunks)
        let received = Int64(session.lastReceived)
        let values = try await store.transaction(for: session.account) { tx in
            // Another process that answered this message meanwhile may have mingled the items already.
            guard try await tx.metadata(Self.stateKey, for: peer)?["received"]?.integerValue == received else {
                throw Superseded()
            }
            var values: [SyncValue] = []
            for chunk in 0..<chunks {
                guard let value = try await tx.metadata(Self.itemsKey(uri, chunk), for: peer) else {
                    throw StoreError(.corrupt, "the OTA session \(session.id) lost the items of \(uri) it kept")
                }
                values.append(value)
            }
            return values
        }
        var items: [(id: String, item: OTAItem)] = []
        for pair in values.flatMap({ $0.arrayValue ?? [] }) {
            guard case .array(let parts) = pair, parts.count == 2, let id = parts[0].stringValue else {
                throw StoreError(.corrupt, "the OTA session \(session.id) keeps an unreadable item of \(uri)")
            }
            do {
                let itemType: OTAItemType = parts[1]["record"] == nil && parts[1]["changes"] != nil ? .changes : .records
                items.append((id, try OTAItem(parts[1], key: id, itemType: itemType)))
            } catch {
                throw StoreError(.corrupt, "the OTA session \(session.id) keeps an unreadable item of \(uri): \(error.result)")
            }
        }
        return items
    }

    /// The answer kept for message `sequence` of a session, if it is still kept.
    func reply(_ sequence: Int, session: OTAServerSession) async throws -> SyncResponse? {
        let peer = Self.peer(session.id)
        let stored = try await store.transaction(for: session.account) { tx in
            try await tx.metadata(Self.replyKey(sequence), for: peer)
        }
        guard let body = stored?["body"]?.dataValue else { return nil }
        return SyncResponse(status: 200, contentType: stored?["type"]?.stringValue, session: session.id, body: body)
    }

    /// Another process kept an answer to the message being processed, or a later one, meanwhile:
    /// the answer is the one it kept.
    struct Superseded: Error {}

    /// How ``commit(_:after:reply:sequence:expiredBefore:)`` ended.
    enum Outcome: Sendable {
        /// The session and the answer are kept.
        case kept
        /// Another process kept an answer to this message (or a later one) first: nothing was written.
        case superseded
    }

    /// Keeps `session` and the answer `reply` to its message `sequence`, unless another process kept
    /// the session past `previous` meanwhile. Writes the items of the message being processed as a new
    /// chunk, and removes what the session no longer needs: items the mingle took or a cancel
    /// dropped, answers no longer kept. A new session (no `previous`) is added to its device's sessions,
    /// and the device's finished sessions and those idle since before `expiredBefore` are removed.
    func commit(
        _ session: OTAServerSession, after previous: OTAServerSession?, reply: SyncResponse, sequence: Int,
        expiredBefore: Date
    ) async throws -> Outcome {
        var session = session
        var chunks: [(uri: String, chunk: Int, value: SyncValue)] = []
        var unchanged: [(uri: String, value: SyncValue?)] = []
        var dropped: [String] = []
        for (uri, sync) in session.syncs {
            let before = previous?.syncs[uri]
            for chunk in sync.storedChunks..<max(sync.storedChunks, before?.storedChunks ?? 0) {
                dropped.append(Self.itemsKey(uri, chunk))
            }
            if !sync.items.isEmpty {
                chunks.append((uri, sync.storedChunks, .array(sync.items.map { .array([.string($0.id), $0.item.value]) })))
                session.syncs[uri]?.storedChunks += 1
                session.syncs[uri]?.items = []
            }
            if sync.unchangedOnDevice != before?.unchangedOnDevice ?? [] {
                let ids = sync.unchangedOnDevice.map(\.rawValue).sorted().map(SyncValue.string)
                unchanged.append((uri, ids.isEmpty ? nil : .array(ids)))
            }
        }
        session.keptReplies.append(sequence)
        if session.keptReplies.count > Self.keptReplies {
            dropped.append(Self.replyKey(session.keptReplies.removeFirst()))
        }
        let (peer, state) = (Self.peer(session.id), session.value)
        let (stored, id, deviceID) = (session, session.id, session.deviceID)
        let replyValue: SyncValue = ["type": .string(reply.contentType ?? ""), "body": .data(reply.body)]
        let expected = previous?.lastReceived
        let writes = (chunks: chunks, unchanged: unchanged, dropped: dropped)
        return try await store.transaction(for: session.account) { tx in
            let current = try await tx.metadata(Self.stateKey, for: peer)
            if let expected {
                guard let current, current["received"]?.integerValue == Int64(expected) else { return .superseded }
            } else if current != nil {
                return .superseded
            }
            try await tx.setMetadata(state, Self.stateKey, for: peer)
            for (uri, chunk, value) in writes.chunks { try await tx.setMetadata(value, Self.itemsKey(uri, chunk), for: peer) }
            for (uri, value) in writes.unchanged { try await tx.setMetadata(value, Self.unchangedKey(uri), for: peer) }
            for key in writes.dropped { try await tx.setMetadata(nil, key, for: peer) }
            try await tx.setMetadata(replyValue, Self.replyKey(sequence), for: peer)
            if expected == nil {
                try await Self.register(id, device: deviceID, account: stored.account, expiredBefore: expiredBefore, in: tx)
            }
            return .kept
        }
    }

    /// How many unfinished sessions of one device are kept besides a new one: a device runs one at a
    /// time, so older ones were abandoned.
    static let keptSessionsPerDevice = 8

    /// Adds a new session to its device's list, and removes the device's sessions that are finished,
    /// idle since before `expiredBefore`, or older than the ``keptSessionsPerDevice`` latest.
    private static func register(
        _ id: String, device: String, account: AccountID, expiredBefore: Date, in tx: any StoreTransaction
    ) async throws {
        let devicePeer = OTADeviceState.peer(device)
        let listed = try await tx.metadata(deviceSessionsKey, for: devicePeer)?.arrayValue?.compactMap(\.stringValue) ?? []
        var kept: [String] = []
        let others = listed.filter { $0 != id }
        for (index, other) in others.enumerated() {
            let peer = peer(other)
            guard let value = try await tx.metadata(stateKey, for: peer) else { continue }
            guard let session = OTAServerSession(value, id: other, account: account),
                !session.isFinished, session.lastActivity >= expiredBefore,
                index >= others.count - keptSessionsPerDevice
            else {
                try await remove(other, value, in: tx)
                continue
            }
            kept.append(other)
        }
        try await tx.setMetadata(.array((kept + [id]).map(SyncValue.string)), deviceSessionsKey, for: devicePeer)
    }

    /// Removes every key of a stored session.
    private static func remove(_ id: String, _ value: SyncValue, in tx: any StoreTransaction) async throws {
        let peer = peer(id)
        for (uri, sync) in value["syncs"]?.dictionaryValue ?? [:] {
            for chunk in 0..<Int(max(0, sync["chunks"]?.integerValue ?? 0)) {
                try await tx.setMetadata(nil, itemsKey(uri, chunk), for: peer)
            }
            try await tx.setMetadata(nil, unchangedKey(uri), for: peer)
        }
        for sequence in value["replies"]?.arrayValue ?? [] {
            if let sequence = sequence.integerValue { try await tx.setMetadata(nil, replyKey(Int(sequence)), for: peer) }
        }
        try await tx.setMetadata(nil, stateKey, for: peer)
    }
}
