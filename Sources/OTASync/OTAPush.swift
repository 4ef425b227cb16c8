import Foundation
import SyncCore

/// The server's push: after the mingle, adds each pushing dataclass's changes
/// to the answer as `sync-changes` with checkpoints, and its `sync-commit`
/// once they are all sent — in fragments (``OTAPushBatch``) sized to fit the
/// message (``OTAAnswerBuilder``).
struct OTAPush {
    let store: AccountStore
    /// The device, as the peer its state is kept under.
    let peer: PeerID
    /// The version node of the device's own writes, which are not sent back.
    let node: PeerID
    let sizer: OTAMessageSizer
    /// When the push runs: a filter's `discard_after_days` counts from here.
    let now: Date
    /// What the push knows of the device, per dataclass, read once for this message.
    private var devices: [String: OTAPushBatch.DeviceView] = [:]

    init(store: AccountStore, session: OTAServerSession, sizer: OTAMessageSizer, now: Date) {
        self.store = store
        self.peer = session.peer
        self.node = session.node
        self.sizer = sizer
        self.now = now
    }

    /// Adds the changes of every pushing dataclass of `session`, then their commits: first every
    /// dataclass whose changes fit whole (so they commit in this message), then fragments of the
    /// others, as much as fits.
    mutating func run(_ session: inout OTAServerSession, into answer: inout OTAAnswerBuilder) async throws {
        var split: [String] = []
        for uri in session.order where session.syncs[uri]?.phase == .pushing {
            if try await !appendNext(uri, wholeOnly: true, session: &session, answer: &answer) { split.append(uri) }
        }
        for uri in split {
            guard try await appendNext(uri, wholeOnly: false, session: &session, answer: &answer) else { return }
        }
    }

    /// Appends the next part of a dataclass's changes that fits; with `wholeOnly`, only all of them.
    /// - Returns: whether the dataclass committed.
    private mutating func appendNext(
        _ uri: String, wholeOnly: Bool, session: inout OTAServerSession, answer: inout OTAAnswerBuilder
    ) async throws -> Bool {
        guard let sync = session.syncs[uri] else { return false }
        let device = try await deviceView(uri)
        let firstSequence = session.lastCommand + 1
        let (store, node, sizer, now) = (store, node, sizer, now)
        let part = try await answer.appendFitting { room in
            let batch = try await OTAPushBatch.next(
                for: sync, device: device, store: store, node: node, sizer: sizer, room: room, now: now)
            return wholeOnly && batch.hasMore ? nil : batch.part(of: sync, firstSequence: firstSequence)
        }
        guard let part else { return false }
        session.syncs[uri] = part.value
        session.lastCommand += part.entries.count  // one command each, numbered from firstSequence
        return part.value.phase == .committed
    }

    private mutating func deviceView(_ uri: String) async throws -> OTAPushBatch.DeviceView {
        if let known = devices[uri] { return known }
        let device = try await OTAPushBatch.DeviceView.read(uri, peer: peer, from: store)
        devices[uri] = device
        return device
    }
}
