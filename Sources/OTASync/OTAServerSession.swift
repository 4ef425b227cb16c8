import Foundation
import SyncCore

/// One OTA session on the server: the dataclasses being synced and where
/// each stands in negotiate → pull → mingle → push → commit.
///
/// A session is a value: the server processes a message on a copy and keeps
/// the copy only when the message was processed whole, so a failure (a store
/// error, say) leaves the session as it was and the device can send the same
/// message again. It is kept in the server's store between messages
/// (``OTAServerSessionStore``), so any server process on that store continues it.
struct OTAServerSession: Sendable {
    let id: String
    let account: AccountID
    let deviceID: String
    /// The sequence of the last message processed.
    var lastReceived = 0
    /// The sequence of the last message sent.
    var lastSent = 0
    /// The sequence of the last command sent.
    var lastCommand = 0
    /// The dataclasses in the order they started.
    var order: [String] = []
    var syncs: [String: DataclassSync] = [:]
    /// Whether the server asked for the device's info in this session.
    var askedDeviceInfo = false
    var lastActivity: Date
    /// The sequences of the messages whose answers are kept for repeats, oldest first.
    var keptReplies: [Int] = []
    /// Whether the last answer was `final`: every dataclass committed or canceled.
    var isFinished = false

    init(id: String, account: AccountID, deviceID: String, now: Date) {
        self.id = id
        self.account = account
        self.deviceID = deviceID
        self.lastActivity = now
    }

    var peer: PeerID { OTADeviceState.peer(deviceID) }
    /// The version node of the writes this device's changes make on the server.
    var node: PeerID { PeerID("ota:\(deviceID)") }

    mutating func nextCommandSequence() -> Int {
        lastCommand += 1
        return lastCommand
    }

    /// The generation a slow or reset sync of `uri` mingled in the message being processed starts:
    /// the same in every process that processes that message, so the anchors of an answer
    /// match the store whichever process's mingle it was.
    func newGeneration(for uri: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(id)/\(uri)/\(lastReceived + 1)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return "g" + String(String(hash, radix: 16).suffix(8))
    }
}

/// Where one dataclass stands in a session.
struct DataclassSync: Sendable {
    enum Phase: String, Sendable, Equatable {
        /// Negotiation failed; the device is expected to start again in the proposed mode.
        case negotiationFailed
        /// The device is sending its changes.
        case pulling
        /// The device sent all its changes; waiting for the other dataclasses.
        case pulled
        /// Mingled; the server is sending its changes.
        case pushing
        /// The server sent its commit.
        case committed
        /// Canceled by the device.
        case canceled
    }

    let uri: String
    var phase: Phase
    var mode: OTASyncMode = .fast
    var direction: OTADirection = .twoWay
    /// The position the device's last server anchor stands for (fast), or the start.
    var anchorPosition: ChangePosition = .start
    var nextDeviceAnchor: String?
    /// The device's items received in the message being processed, kept until the mingle;
    /// those of earlier messages are in the store, in ``storedChunks`` chunks.
    var items: [(id: String, item: OTAItem)] = []
    /// How many chunks of the device's items (one per earlier message of the pull) the store holds.
    var storedChunks = 0
    /// The server's changes up to here are sent (the position the next pushed fragment starts after).
    var pushCursor: ChangePosition = .start
    /// Records the device already holds as they are (slow sync): not sent back.
    var unchangedOnDevice: Set<RecordID> = []
    /// The device's items the mingle refused (``OTAServer/validation``), by id: the reason.
    var refusals: [String: String] = [:]
    var generation: String?

    init(uri: String, phase: Phase) {
        self.uri = uri
        self.phase = phase
    }
}

extension DataclassSync {
    /// Whether the mingle still waits for this dataclass.
    var blocksMingle: Bool { phase == .negotiationFailed || phase == .pulling }

    /// Drops the device's items, here and in the store (once the session is kept).
    mutating func dropItems() {
        items = []
        storedChunks = 0
    }
}

// MARK: - Stored form

extension OTAServerSession {
    /// The session as stored, without the items of the message being processed and the records
    /// unchanged on the device (``OTAServerSessionStore`` keeps those under keys of their own).
    var value: SyncValue {
        var syncs: [String: SyncValue] = [:]
        for (uri, sync) in self.syncs { syncs[uri] = sync.value }
        return [
            "device": .string(deviceID), "received": .integer(Int64(lastReceived)), "sent": .integer(Int64(lastSent)),
            "command": .integer(Int64(lastCommand)), "order": .array(order.map(SyncValue.string)), "syncs": .dictionary(syncs),
            "askedDeviceInfo": .bool(askedDeviceInfo), "activity": .date(lastActivity),
            "replies": .array(keptReplies.map { .integer(Int64($0)) }), "finished": .bool(isFinished),
        ]
    }

    /// Reads a stored session; nil for a value that is not one.
    init?(_ value: SyncValue, id: String, account: AccountID) {
        guard let deviceID = value["device"]?.stringValue, let lastActivity = value["activity"]?.dateValue,
            let received = value["received"]?.integerValue, let sent = value["sent"]?.integerValue,
            let command = value["command"]?.integerValue, let order = value["order"]?.arrayValue,
            let syncs = value["syncs"]?.dictionaryValue
        else { return nil }
        self.init(id: id, account: account, deviceID: deviceID, now: lastActivity)
        lastReceived = Int(received)
        lastSent = Int(sent)
        lastCommand = Int(command)
        self.order = order.compactMap(\.stringValue)
        for (uri, stored) in syncs {
            guard let sync = DataclassSync(stored, uri: uri) else { return nil }
            self.syncs[uri] = sync
        }
        askedDeviceInfo = value["askedDeviceInfo"]?.boolValue ?? false
        keptReplies = value["replies"]?.arrayValue?.compactMap { $0.integerValue.map(Int.init) } ?? []
        isFinished = value["finished"]?.boolValue ?? false
    }
}

extension DataclassSync {
    fileprivate var value: SyncValue {
        var value: [String: SyncValue] = [
            "phase": .string(phase.rawValue), "mode": .string(mode.rawValue), "direction": .string(direction.rawValue),
            "anchor": .integer(Int64(clamping: anchorPosition.rawValue)), "chunks": .integer(Int64(storedChunks)),
            "cursor": .integer(Int64(clamping: pushCursor.rawValue)), "unchanged": .bool(!unchangedOnDevice.isEmpty),
            "refusals": .dictionary(refusals.mapValues(SyncValue.string)),
        ]
        if let nextDeviceAnchor { value["nextDeviceAnchor"] = .string(nextDeviceAnchor) }
        if let generation { value["generation"] = .string(generation) }
        return .dictionary(value)
    }

    /// Reads a stored dataclass sync (``unchangedOnDevice`` is read apart); nil for a value that is not one.
    fileprivate init?(_ value: SyncValue, uri: String) {
        guard let phase = value["phase"]?.stringValue.flatMap(Phase.init(rawValue:)),
            let mode = value["mode"]?.stringValue.flatMap(OTASyncMode.init(rawValue:)),
            let direction = value["direction"]?.stringValue.flatMap(OTADirection.init(rawValue:)),
            let anchor = value["anchor"]?.integerValue, let cursor = value["cursor"]?.integerValue,
            let chunks = value["chunks"]?.integerValue
        else { return nil }
        self.init(uri: uri, phase: phase)
        self.mode = mode
        self.direction = direction
        anchorPosition = ChangePosition(UInt64(max(0, anchor)))
        pushCursor = ChangePosition(UInt64(max(0, cursor)))
        storedChunks = Int(chunks)
        nextDeviceAnchor = value["nextDeviceAnchor"]?.stringValue
        generation = value["generation"]?.stringValue
        refusals = value["refusals"]?.dictionaryValue?.compactMapValues(\.stringValue) ?? [:]
    }

    /// Whether the stored form says records are unchanged on the device (kept under a key of their own).
    static func hasUnchanged(_ value: SyncValue?) -> Bool { value?["unchanged"]?.boolValue ?? false }
}
