import SyncCore

/// An `idmap` a device sends, server UUID → device LUID: read from the
/// parameter, checked before anything of the message is applied, and merged
/// into the map the server keeps for the device and dataclass.
struct OTAIDMapUpdate: Sendable {
    /// The pairs, in the order the parameter gave them.
    let pairs: [(uuid: String, luid: String)]

    /// Reads an `idmap` parameter.
    /// - Throws: ``OTAMessageError`` (`E_ParamError`, `param-name` = `idmap`) for one that is not a dictionary of strings.
    init(_ idmap: SyncValue) throws(OTAMessageError) {
        guard case .dictionary(let entries) = idmap else {
            throw OTAMessageError.paramError("idmap", "idmap must be a dictionary of server ids to device ids")
        }
        var pairs: [(uuid: String, luid: String)] = []
        for (uuid, luid) in entries {
            guard case .string(let luid) = luid else {
                throw OTAMessageError(OTAResult(.paramError, "idmap values must be strings", paramName: "idmap", paramKey: uuid))
            }
            pairs.append((uuid, luid))
        }
        self.pairs = pairs
    }

    /// Checks the id maps of the device's command responses before anything is applied: a malformed
    /// one means the message is not processed at all.
    /// - Throws: ``OTAMessageError`` (`E_BadRequest`) for an unreadable `idmap` or one for a dataclass not synced here.
    static func validate(_ responses: [OTACommandResponse], dataclasses: Set<String>) throws(OTAMessageError) {
        for response in responses where response.knownName == .syncChanges {
            guard let idmap = response.params["idmap"] else { continue }
            guard let uri = response.uri, dataclasses.contains(uri) else {
                throw OTAMessageError(OTAResult(.badRequest, "an idmap answers sync-changes of a dataclass synced here", paramName: "uri"))
            }
            do {
                _ = try OTAIDMapUpdate(idmap)
            } catch {
                throw OTAMessageError(OTAResult(
                    .badRequest, "a sync-changes response carries an unreadable idmap: \(error.result.detail ?? "")",
                    paramName: "idmap", paramKey: error.result.paramKey))
            }
        }
    }

    /// Takes the pairs into the stored map of `dataclass` for the device `peer`.
    func merge(into store: AccountStore, dataclass: String, peer: PeerID) async throws {
        let pairs = pairs
        try await store.transaction { tx in
            var map = OTAIDMap.server(dataclass: dataclass, device: peer)
            try await map.load(luids: pairs.map(\.luid), uuids: pairs.map(\.uuid), in: tx)
            for pair in pairs { try await map.set(luid: pair.luid, uuid: pair.uuid, in: tx) }
        }
    }
}
