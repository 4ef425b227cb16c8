import Foundation
import SyncCore

/// What the server keeps about one device and one dataclass between
/// sessions, in the store's per-peer metadata.
///
/// Server anchors read `<generation>.<position>`: the device holds every
/// server change of the dataclass up to that change position. A slow or reset
/// sync starts a new generation, which makes every earlier anchor unknown
/// (and so leads to slow sync); anchors of the current generation stay valid,
/// so a session cut anywhere resumes from the device's latest checkpoint.
struct OTADeviceState: Hashable, Sendable {
    /// The anchors' generation; nil before the first sync.
    var generation: String?
    /// The device anchor of the last sync that reached the mingle, and the one before it.
    var deviceAnchors: [String] = []
    /// The mode the server wants for the next sync (set by ``OTAServer/requestReset(_:account:device:)``).
    var requestedMode: OTASyncMode?

    static func key(_ dataclass: String) -> String { "ota.state.\(dataclass)" }
    static func conflictsKey(_ dataclass: String) -> String { "ota.conflicts.\(dataclass)" }
    static func mingledKey(_ dataclass: String) -> String { "ota.mingled.\(dataclass)" }
    static let deviceInfoKey = "ota.deviceinfo"
    static func filterKey(_ dataclass: String) -> String { "ota.filter.\(dataclass)" }

    /// The metadata peer under which a device's state lives.
    static func peer(_ device: String) -> PeerID { PeerID("ota-device:\(device)") }

    init() {}

    init(_ value: SyncValue?) {
        guard case .dictionary(let state)? = value else { return }
        generation = state["generation"]?.stringValue
        deviceAnchors = state["deviceAnchors"]?.arrayValue?.compactMap(\.stringValue) ?? []
        requestedMode = state["requestedMode"]?.stringValue.flatMap(OTASyncMode.init(rawValue:))
    }

    var value: SyncValue {
        var state: [String: SyncValue] = ["deviceAnchors": .array(deviceAnchors.map(SyncValue.string))]
        if let generation { state["generation"] = .string(generation) }
        if let requestedMode { state["requestedMode"] = .string(requestedMode.rawValue) }
        return .dictionary(state)
    }

    /// The position a server anchor of the current generation stands for; nil for an unknown anchor.
    func position(of anchor: String?) -> ChangePosition? {
        guard let anchor, let generation, let dot = anchor.lastIndex(of: ".") else { return nil }
        guard anchor[..<dot] == generation, let raw = UInt64(anchor[anchor.index(after: dot)...]) else { return nil }
        return ChangePosition(raw)
    }

    /// The server anchor for `position` in the current generation.
    func anchor(at position: ChangePosition) -> String { "\(generation ?? "g0").\(position.rawValue)" }

    /// Remembers the device anchor a sync reached the mingle with (keeping the one before, for a sync cut before its commit).
    mutating func remember(deviceAnchor: String?) {
        guard let deviceAnchor, deviceAnchors.last != deviceAnchor else { return }
        deviceAnchors = Array((deviceAnchors + [deviceAnchor]).suffix(2))
    }
}

/// What the last mingle of a device's changes took: the device anchor of its
/// session and a digest of each item. A session cut between the mingle and
/// its answer is started again with the same device anchor and sends the same
/// items again; those whose digest matches were applied already and are
/// skipped, so they cannot overwrite what another device changed since.
struct OTAMingled: Sendable {
    var deviceAnchor: String?
    var digests: [String: String] = [:]

    init(deviceAnchor: String?, digests: [String: String]) {
        self.deviceAnchor = deviceAnchor
        self.digests = digests
    }

    init(_ value: SyncValue?) {
        deviceAnchor = value?["deviceAnchor"]?.stringValue
        digests = value?["digests"]?.dictionaryValue?.compactMapValues(\.stringValue) ?? [:]
    }

    var value: SyncValue {
        var value: SyncValue = ["digests": .dictionary(digests.mapValues(SyncValue.string))]
        if let deviceAnchor, case .dictionary(var fields) = value {
            fields["deviceAnchor"] = .string(deviceAnchor)
            value = .dictionary(fields)
        }
        return value
    }

    /// A digest of an item that is the same in every process (FNV-1a over its stored form).
    static func digest(_ item: OTAItem) throws -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in try StoredValueFormat.encode(item.value) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
