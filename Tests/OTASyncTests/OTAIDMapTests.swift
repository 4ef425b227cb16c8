import OTASync
import SyncCore
import Testing

/// The server's id map of a device is kept an entry per record (`ota.idmap␟DATACLASS␟l␟LUID` and
/// `…␟u␟UUID`), and a map an earlier version kept as one value is taken over.
struct OTAIDMapTests {
    let harness = OTAHarness()
    let peer = PeerID("ota-device:phone")
    let prefix = "ota.idmap\u{1F}\(Dataclass.contacts)\u{1F}"

    /// The device's entries of the contacts' id map on the server, LUID → UUID.
    func serverMap() async throws -> [String: String] {
        let metadata = await harness.serverStore.allMetadata(of: harness.account)[peer] ?? [:]
        var map: [String: String] = [:]
        for (key, value) in metadata where key.hasPrefix(prefix + "l\u{1F}") {
            map[String(key.dropFirst(prefix.count + 2))] = value.stringValue
        }
        return map
    }

    @Test("each record the device syncs has an entry each way, and a new sync adds only its own")
    func entriesPerRecord() async throws {
        let phone = harness.device("phone")
        let luids = [try await phone.add(["first name": "Ada"]), try await phone.add(["first name": "Grace"])]
        _ = try await phone.sync()
        _ = try await phone.sync()  // the device's id map for what the server sent goes with its next sync

        let map = try await serverMap()
        #expect(Set(map.keys) == Set(luids))
        let metadata = await harness.serverStore.allMetadata(of: harness.account)[peer] ?? [:]
        for (luid, uuid) in map { #expect(metadata[prefix + "u\u{1F}" + uuid] == .string(luid)) }

        let third = try await phone.add(["first name": "Katherine"])
        _ = try await phone.sync()
        #expect(Set(try await serverMap().keys) == Set(luids + [third]))
    }

    @Test("a map an earlier version kept as one value is taken over: the device's edit reaches the record it names")
    func earlierFormIsTakenOver() async throws {
        let phone = harness.device("phone")
        let luids = [try await phone.add(["first name": "Ada"]), try await phone.add(["first name": "Grace"])]
        _ = try await phone.sync()
        _ = try await phone.sync()
        let map = try await serverMap()
        #expect(map.count == 2)

        // The map as an earlier version kept it: one dictionary, LUID → UUID.
        try await harness.serverStore.transaction(for: harness.account) { [prefix, peer] tx in
            try await tx.removeMetadata(keysStartingWith: prefix, for: peer)
            try await tx.setMetadata(.dictionary(map.mapValues(SyncValue.string)), "ota.idmap.\(Dataclass.contacts)", for: peer)
        }
        #expect(try await serverMap().isEmpty)

        _ = try await phone.records.save(
            dataclass: Dataclass.contacts, luid: luids[0], entity: Dataclass.contact, fields: ["first name": "Ada Lovelace"])
        _ = try await phone.sync()

        let names = Set(try await harness.serverRecords(Dataclass.contacts).map { $0.fields["first name"] })
        #expect(names == ["Ada Lovelace", "Grace"], "the edit became a new record: the old map was not read")
        #expect(try await serverMap() == map)
        let metadata = await harness.serverStore.allMetadata(of: harness.account)[peer] ?? [:]
        #expect(metadata["ota.idmap.\(Dataclass.contacts)"] == nil)
    }

    @Test("a device's record of the LUIDs the server knows, kept as one value by an earlier version, is taken over: a local edit is based on the server's version")
    func devicesEarlierFormIsTakenOver() async throws {
        let store = MemoryStore()
        let phone = harness.device("phone", store: store)
        let luid = try await phone.add(["first name": "Ada"])
        _ = try await phone.sync()

        // The LUIDs as an earlier version kept them: one dictionary, LUID → UUID ("" where not learned).
        let devicePeer = PeerID("ota-server")
        let devicePrefix = "ota.ids\u{1F}\(Dataclass.contacts)\u{1F}"
        let entries = (await store.allMetadata(of: harness.account)[devicePeer] ?? [:]).filter { $0.key.hasPrefix(devicePrefix + "l\u{1F}") }
        #expect(entries.count == 1)
        let legacy = Dictionary(uniqueKeysWithValues: entries.map { (String($0.key.dropFirst(devicePrefix.count + 2)), $0.value.stringValue ?? "") })
        try await store.transaction(for: harness.account) { tx in
            try await tx.removeMetadata(keysStartingWith: devicePrefix, for: devicePeer)
            try await tx.setMetadata(legacy, MetadataKey<[String: String]>("ota.ids.\(Dataclass.contacts)", peer: devicePeer))
        }

        _ = try await phone.records.save(dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["first name": "Ada Lovelace"])
        let pending = try await store.transaction(for: harness.account) { tx in try await tx.journal.entries() }
        #expect(pending.count == 1)
        #expect(pending.first?.archCopy != nil, "the edit is based on nothing: the old record of what the server knows was not read")
        let after = await store.allMetadata(of: harness.account)[devicePeer] ?? [:]
        #expect(after["ota.ids.\(Dataclass.contacts)"] == nil)
        #expect(after[devicePrefix + "l\u{1F}" + luid] != nil)

        _ = try await phone.sync()
        #expect(try await harness.serverRecords(Dataclass.contacts).map { $0.fields["first name"] } == ["Ada Lovelace"])
    }
}
