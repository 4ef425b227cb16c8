import SyncCore

/// A resource of a device that `get`, `put` and `delete` name by `uri`.
enum OTAResource: Hashable, Sendable {
    /// `deviceinfo`: what the device says about itself.
    case deviceInfo
    /// `dataclass/<name>/filter`: what the device wants of a dataclass.
    case filter(dataclass: String)

    private static let filterPrefix = "dataclass/"
    private static let filterSuffix = "/filter"

    /// Reads a `uri`; nil for one that names no resource.
    init?(uri: String) {
        if uri == "deviceinfo" {
            self = .deviceInfo
        } else if uri.hasPrefix(Self.filterPrefix), uri.hasSuffix(Self.filterSuffix) {
            self = .filter(dataclass: String(uri.dropFirst(Self.filterPrefix.count).dropLast(Self.filterSuffix.count)))
        } else {
            return nil
        }
    }

    /// The resource's `uri`.
    var uri: String {
        switch self {
        case .deviceInfo: "deviceinfo"
        case .filter(let dataclass): Self.filterPrefix + dataclass + Self.filterSuffix
        }
    }

    /// Where the server keeps the resource, in the device's metadata.
    var metadataKey: String {
        switch self {
        case .deviceInfo: OTADeviceState.deviceInfoKey
        case .filter(let dataclass): OTADeviceState.filterKey(dataclass)
        }
    }
}

/// The server's side of the device's resources: runs the device's `get`,
/// `put` and `delete` of `deviceinfo` and filters, keeps the device's answer
/// to the server's own `get deviceinfo`, and asks for it on a first sync.
struct OTAResources {
    let store: AccountStore
    /// The device, as the peer its state is kept under.
    let peer: PeerID
    /// The dataclasses the server syncs: the only ones with a filter.
    let dataclasses: Set<String>

    /// Runs a `get`, `put` or `delete` from the device.
    /// - Returns: the response, with the `value` for a `get`.
    /// - Throws: ``OTAMessageError`` when the command is refused (nothing is written).
    func run(_ command: OTACommand, _ name: OTACommandName) async throws -> OTACommandResponse {
        let uri = try command.requiredURI()
        guard let resource = OTAResource(uri: uri) else {
            throw OTAMessageError(OTAResult(.notFound, "unknown uri \(uri)", paramName: "uri"))
        }
        if case .filter(let dataclass) = resource, !dataclasses.contains(dataclass) {
            throw OTAMessageError(OTAResult(.notFound, "no dataclass \(dataclass)", paramName: "uri"))
        }
        let (peer, key) = (peer, resource.metadataKey)
        switch name {
        case .get:
            let value = try await store.transaction { tx in try await tx.metadata(key, for: peer) }
            guard let value else { throw OTAMessageError(OTAResult(.notFound, "\(uri) is not set", paramName: "uri")) }
            return OTACommandResponse(answering: command, .ok, params: ["value": value])
        case .put:
            guard let value = command.params["value"] else { throw OTAMessageError.missingParam("value") }
            guard case .dictionary(let dictionary) = value else { throw OTAMessageError.paramError("value", "value must be a dictionary") }
            if case .filter = resource { _ = try OTADataclassFilter(dictionary) }
            try await write(value, resource)
        default:  // delete
            guard resource != .deviceInfo else {
                throw OTAMessageError(OTAResult(.notAllowed, "deviceinfo cannot be deleted", paramName: "uri"))
            }
            try await write(nil, resource)
        }
        return OTACommandResponse(answering: command, .ok)
    }

    /// Stores a resource's new value (nil: removed). A changed filter makes the dataclass's next sync slow.
    private func write(_ value: SyncValue?, _ resource: OTAResource) async throws {
        let peer = peer
        try await store.transaction { tx in
            try await tx.setMetadata(value, resource.metadataKey, for: peer)
            if case .filter(let dataclass) = resource { try await Self.slowSyncNext(dataclass, peer: peer, in: tx) }
        }
    }

    /// A changed filter changes what the device should hold: its next sync of the dataclass is slow,
    /// so it receives what the filter now admits and drops what it no longer does.
    private static func slowSyncNext(_ dataclass: String, peer: PeerID, in tx: any StoreTransaction) async throws {
        var state = OTADeviceState(try await tx.metadata(OTADeviceState.key(dataclass), for: peer))
        guard state.generation != nil, state.requestedMode != .reset else { return }
        state.requestedMode = .slow
        try await tx.setMetadata(state.value, OTADeviceState.key(dataclass), for: peer)
    }

    /// Keeps the device's answer to the server's `get deviceinfo`.
    func take(_ response: OTACommandResponse) async throws {
        guard response.knownName == .get, response.uri.flatMap(OTAResource.init(uri:)) == .deviceInfo,
            response.status?.isSuccess == true, case .dictionary(let info)? = response.params["value"]
        else { return }
        let peer = peer
        try await store.transaction { tx in
            try await tx.setMetadata(.dictionary(info), OTADeviceState.deviceInfoKey, for: peer)
        }
    }

    /// On a device's first sync, the server's `get deviceinfo` (the answer comes in the device's next message).
    /// - Returns: the command, numbered in `session`, or nil when the server asked already or knows the info.
    func deviceInfoRequest(in session: inout OTAServerSession) async throws -> OTACommand? {
        guard !session.askedDeviceInfo, !session.syncs.isEmpty else { return nil }
        session.askedDeviceInfo = true
        let peer = peer
        let known = try await store.transaction { tx in try await tx.metadata(OTADeviceState.deviceInfoKey, for: peer) }
        guard known == nil else { return nil }
        return OTACommand(.get, sequence: session.nextCommandSequence(), params: ["uri": .string(OTAResource.deviceInfo.uri)])
    }
}
