import Foundation
import SyncCore

/// One OTA session on the server: the dataclasses being synced and where
/// each stands in negotiate → pull → mingle → push → commit.
///
/// A session is a value: the server processes a message on a copy and keeps
/// the copy only when the message was processed whole, so a failure (a store
/// error, say) leaves the session as it was and the device can send the same
/// message again.
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
}

/// Where one dataclass stands in a session.
struct DataclassSync: Sendable {
    enum Phase: Sendable, Equatable {
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
    /// The device's items, kept until the mingle.
    var items: [(id: String, item: OTAItem)] = []
    /// The server's changes up to here are sent (the position the next pushed fragment starts after).
    var pushCursor: ChangePosition = .start
    /// Records the device already holds as they are (slow sync): not sent back.
    var unchangedOnDevice: Set<RecordID> = []
    /// The device's items the mingle refused (``OTAServer/validation``), by id: the reason.
    var refusals: [String: String] = [:]
    var generation: String?
}

extension DataclassSync {
    /// Whether the mingle still waits for this dataclass.
    var blocksMingle: Bool { phase == .negotiationFailed || phase == .pulling }
}
