import SyncCore

/// An id map of one dataclass: LUIDs — the ids a device gives its records — beside the server's UUIDs,
/// kept an entry per record in a peer's metadata, each way: `PREFIX l␟LUID` holds the UUID and
/// `PREFIX u␟UUID` the LUID (␟ is U+001F).
///
/// The server keeps one per device (``server(dataclass:device:)``), the device one of the LUIDs the
/// server knows (``device(dataclass:)``), with the UUID `""` where the device has not learned it. A sync
/// reads the entries of the items it handles, many in one read (``load(luids:uuids:in:)``), and writes
/// those it changes, so its cost follows what changed, not how many records the map holds. A slow or
/// reset sync drops a whole map with one removal by prefix (``removeAll(in:)``).
///
/// A value of this type is what one transaction knows of the map: the lookups answer from what was
/// loaded or set through it.
struct OTAIDMap: Sendable {
    /// The peer whose metadata holds the map.
    let peer: PeerID
    /// What every key of the map starts with.
    private let prefix: String
    /// Where an earlier version kept the whole map, LUID → UUID, as one dictionary.
    private let legacyKey: String
    /// Known entries, `nil` for a LUID known to have none.
    private var uuidByLUID: [String: String?] = [:]
    /// Known entries, `nil` for a UUID known to have none.
    private var luidByUUID: [String: String?] = [:]
    /// Whether ``load(luids:uuids:in:)`` has looked for an earlier version's map.
    private var checkedLegacy = false

    /// The server's map of `dataclass` for the device whose state lives under `peer`: `ota.idmap␟DATACLASS␟…`.
    static func server(dataclass: String, device peer: PeerID) -> OTAIDMap {
        OTAIDMap(peer: peer, prefix: "ota.idmap\u{1F}\(dataclass)\u{1F}", legacyKey: "ota.idmap.\(dataclass)")
    }

    /// The device's map of `dataclass`: the LUIDs the server knows, with the UUID where the device learned
    /// it (else `""`), under ``OTAClientState/peer``: `ota.ids␟DATACLASS␟…`.
    static func device(dataclass: String) -> OTAIDMap {
        OTAIDMap(peer: OTAClientState.peer, prefix: "ota.ids\u{1F}\(dataclass)\u{1F}", legacyKey: "ota.ids.\(dataclass)")
    }

    private init(peer: PeerID, prefix: String, legacyKey: String) {
        self.peer = peer
        self.prefix = prefix
        self.legacyKey = legacyKey
    }

    /// Reads the entries of `luids` and `uuids` not known yet, in as few reads as the store makes.
    ///
    /// A map an earlier version kept as one value (`ota.idmap.DATACLASS` on the server, `ota.ids.DATACLASS`
    /// on the device) is first written out entry by entry in `tx`, and the old value removed.
    mutating func load(
        luids: some Sequence<String> = [String](), uuids: some Sequence<String> = [String](), in tx: any StoreTransaction
    ) async throws {
        let luids = luids.filter { uuidByLUID[$0] == nil }
        let uuids = uuids.filter { luidByUUID[$0] == nil }
        guard !checkedLegacy || !luids.isEmpty || !uuids.isEmpty else { return }
        checkedLegacy = true
        let keys = luids.map(key(luid:)) + uuids.map(key(uuid:))
        var values = try await tx.metadata(at: [legacyKey] + keys, for: peer)
        if let legacy = values[legacyKey] {
            try await migrate(legacy, in: tx)
            values = try await tx.metadata(at: keys, for: peer)  // answered from the entries just written
        }
        for luid in luids where uuidByLUID[luid] == nil { uuidByLUID[luid] = .some(values[key(luid: luid)]?.stringValue) }
        for uuid in uuids where luidByUUID[uuid] == nil { luidByUUID[uuid] = .some(values[key(uuid: uuid)]?.stringValue) }
    }

    /// The UUID mapped to `luid`, as loaded or set through this value (`nil` for one not loaded).
    func uuid(forLUID luid: String) -> String? { uuidByLUID[luid] ?? nil }

    /// The LUID mapped to `uuid`, as loaded or set through this value (`nil` for one not loaded).
    func luid(forUUID uuid: String) -> String? { luidByUUID[uuid] ?? nil }

    /// Tells the map that `uuid` was just made, so it has no entry and need not be read.
    mutating func assumeUnmapped(uuid: String) {
        if luidByUUID[uuid] == nil { luidByUUID[uuid] = .some(nil) }
    }

    /// Tells the map that `luid` was just made, so it has no entry and need not be read.
    mutating func assumeUnmapped(luid: String) {
        if uuidByLUID[luid] == nil { uuidByLUID[luid] = .some(nil) }
    }

    /// Maps `luid` to `uuid` in `tx` (`""`: a LUID the server knows, its UUID not learned), dropping the
    /// pairs either of them was in before.
    mutating func set(luid: String, uuid: String, in tx: any StoreTransaction) async throws {
        try await load(luids: [luid], uuids: uuid.isEmpty ? [] : [uuid], in: tx)
        let previousUUID = self.uuid(forLUID: luid)
        let previousLUID = uuid.isEmpty ? nil : self.luid(forUUID: uuid)
        guard previousUUID != uuid || (!uuid.isEmpty && previousLUID != luid) else { return }
        if let previousUUID, !previousUUID.isEmpty {
            try await write(nil, key(uuid: previousUUID), in: tx)
            luidByUUID[previousUUID] = .some(nil)
        }
        if let previousLUID, previousLUID != luid {
            try await write(nil, key(luid: previousLUID), in: tx)
            uuidByLUID[previousLUID] = .some(nil)
        }
        try await write(.string(uuid), key(luid: luid), in: tx)
        uuidByLUID[luid] = .some(uuid)
        if !uuid.isEmpty {
            try await write(.string(luid), key(uuid: uuid), in: tx)
            luidByUUID[uuid] = .some(luid)
        }
    }

    /// Removes `luid`'s entry, and its UUID's, in `tx`.
    mutating func remove(luid: String, in tx: any StoreTransaction) async throws {
        try await load(luids: [luid], in: tx)
        guard let uuid = self.uuid(forLUID: luid) else { return }
        try await write(nil, key(luid: luid), in: tx)
        uuidByLUID[luid] = .some(nil)
        if !uuid.isEmpty {
            try await write(nil, key(uuid: uuid), in: tx)
            luidByUUID[uuid] = .some(nil)
        }
    }

    /// Forgets what this value knows of `luid`, for when other code may have changed its entry in the
    /// transaction: the next lookup reads it again.
    mutating func forget(luid: String) {
        if case let uuid?? = uuidByLUID[luid] { luidByUUID[uuid] = nil }
        uuidByLUID[luid] = nil
    }

    /// Drops every entry of the map in `tx` (and an earlier version's single value).
    mutating func removeAll(in tx: any StoreTransaction) async throws {
        try await tx.removeMetadata(keysStartingWith: prefix, for: peer)
        try await tx.setMetadata(nil, legacyKey, for: peer)
        uuidByLUID = [:]
        luidByUUID = [:]
        checkedLegacy = true
    }

    // MARK: Keys

    private func key(luid: String) -> String { prefix + "l\u{1F}" + luid }
    private func key(uuid: String) -> String { prefix + "u\u{1F}" + uuid }

    private func write(_ value: SyncValue?, _ key: String, in tx: any StoreTransaction) async throws {
        try await tx.setMetadata(value, key, for: peer)
    }

    /// Writes an earlier version's map out entry by entry, and removes it. Of two LUIDs mapped to one UUID
    /// (which the old form could hold), the one that sorts last keeps it.
    private func migrate(_ legacy: SyncValue, in tx: any StoreTransaction) async throws {
        var uuidByLUID: [String: String] = [:]
        var luidByUUID: [String: String] = [:]
        for (luid, uuid) in (legacy.dictionaryValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard case .string(let uuid) = uuid else { continue }
            if uuid.isEmpty { uuidByLUID[luid] = "" } else { luidByUUID[uuid] = luid }
        }
        for (uuid, luid) in luidByUUID { uuidByLUID[luid] = uuid }
        for (luid, uuid) in uuidByLUID {
            try await write(.string(uuid), key(luid: luid), in: tx)
            if !uuid.isEmpty { try await write(.string(luid), key(uuid: uuid), in: tx) }
        }
        try await tx.setMetadata(nil, legacyKey, for: peer)
    }
}
