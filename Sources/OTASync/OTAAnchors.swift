public import SyncCore

/// How a dataclass syncs in a session.
public enum OTASyncMode: String, Hashable, Sendable, CaseIterable, Codable {
    /// Only the changes since the last sync travel, both ways.
    case fast
    /// The device sends every record; the server matches them to its own and sends what the device lacks.
    case slow
    /// The device drops its records of the dataclass and takes the server's.
    case reset
}

/// Which way changes travel.
public enum OTADirection: String, Hashable, Sendable, CaseIterable {
    /// Both ways.
    case twoWay = "twoway"
    /// Only from the device to the server.
    case toServer = "to_server"
    /// Only from the server to the device.
    case toDevice = "to_device"
}

/// The `anchors` parameter: the sync mode, the direction, the versions and
/// the opaque anchors each side keeps for the other.
///
/// ```swift
/// let anchors = OTAAnchors(mode: .fast, lastServerAnchor: "g7.1042", nextDeviceAnchor: "d3.12")
/// let command = OTACommand(name: "sync-start", sequence: 1, params: ["uri": "com.apple.Contacts", "anchors": anchors.value])
/// ```
public struct OTAAnchors: Hashable, Sendable {
    /// The sync mode asked for or granted; fast when absent.
    public var mode: OTASyncMode?
    /// The direction; two-way when absent.
    public var direction: OTADirection?
    /// The dataclass version the device speaks.
    public var deviceVersion: String?
    /// The dataclass version the server speaks.
    public var serverVersion: String?
    /// The device anchor of the last completed sync.
    public var lastDeviceAnchor: String?
    /// The device anchor this sync will end with.
    public var nextDeviceAnchor: String?
    /// The server anchor the device last processed (a checkpoint or a commit).
    public var lastServerAnchor: String?
    /// A new server anchor: a checkpoint, or the commit's.
    public var nextServerAnchor: String?

    /// Makes anchors.
    public init(
        mode: OTASyncMode? = nil, direction: OTADirection? = nil, deviceVersion: String? = nil,
        serverVersion: String? = nil, lastDeviceAnchor: String? = nil, nextDeviceAnchor: String? = nil,
        lastServerAnchor: String? = nil, nextServerAnchor: String? = nil
    ) {
        self.mode = mode
        self.direction = direction
        self.deviceVersion = deviceVersion
        self.serverVersion = serverVersion
        self.lastDeviceAnchor = lastDeviceAnchor
        self.nextDeviceAnchor = nextDeviceAnchor
        self.lastServerAnchor = lastServerAnchor
        self.nextServerAnchor = nextServerAnchor
    }

    /// Reads the `anchors` parameter.
    /// - Throws: `E_ParamError` for a wrong type, `E_BadValue` for an unknown mode,
    ///   `E_NotSupported` for an unknown direction — each with `param-name` = `anchors`.
    public init(_ value: SyncValue) throws(OTAMessageError) {
        guard case .dictionary(let anchors) = value else { throw .paramError("anchors", "anchors must be a dictionary") }
        func string(_ key: String) throws(OTAMessageError) -> String? {
            switch anchors[key] {
            case nil: return nil
            case .string(let string)?: return string
            default: throw OTAMessageError(OTAResult(.paramError, "\(key) must be a string", paramName: "anchors", paramKey: key))
            }
        }
        if let mode = try string("mode") {
            guard let known = OTASyncMode(rawValue: mode) else {
                throw .badValue("anchors", "unknown mode '\(mode)'; use fast, slow or reset", key: "mode")
            }
            self.mode = known
        }
        if let direction = try string("direction") {
            guard let known = OTADirection(rawValue: direction) else {
                throw OTAMessageError(
                    OTAResult(.notSupported, "unknown direction '\(direction)'", paramName: "anchors", paramKey: "direction"))
            }
            self.direction = known
        }
        deviceVersion = try string("device_version")
        serverVersion = try string("server_version")
        lastDeviceAnchor = try string("last_device_anchor")
        nextDeviceAnchor = try string("next_device_anchor")
        lastServerAnchor = try string("last_server_anchor")
        nextServerAnchor = try string("next_server_anchor")
    }

    /// The anchors as a parameter value.
    public var value: SyncValue {
        var anchors: [String: SyncValue] = [:]
        if let mode { anchors["mode"] = .string(mode.rawValue) }
        if let direction { anchors["direction"] = .string(direction.rawValue) }
        if let deviceVersion { anchors["device_version"] = .string(deviceVersion) }
        if let serverVersion { anchors["server_version"] = .string(serverVersion) }
        if let lastDeviceAnchor { anchors["last_device_anchor"] = .string(lastDeviceAnchor) }
        if let nextDeviceAnchor { anchors["next_device_anchor"] = .string(nextDeviceAnchor) }
        if let lastServerAnchor { anchors["last_server_anchor"] = .string(lastServerAnchor) }
        if let nextServerAnchor { anchors["next_server_anchor"] = .string(nextServerAnchor) }
        return .dictionary(anchors)
    }
}
