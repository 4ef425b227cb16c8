import SyncCore

/// The checks of account isolation, per-peer metadata and argument validation.
extension StoreContractSuite {
    /// Checks that one account never sees or changes another's records,
    /// metadata or change sequence, even under the same record keys and peers.
    /// - Throws: ``VerificationError`` naming the rule "account isolation".
    public func verifyAccountIsolation() async throws {
                try await checking(.accountIsolation) { store, check in
            let alice: AccountID = "contract-alice"
            let bob: AccountID = "contract-bob"
            let peer: PeerID = "shared-peer"
            let key = RecordKey(collection: "notes", id: "same-id")
            let aliceRecord = Self.record("notes", "same-id", ["owner": "alice"])
            let bobRecord = Self.record("notes", "same-id", ["owner": "bob"])

            try await Self.put([aliceRecord, Self.record("notes", "alice-only")], in: store, for: alice)
            try await Self.setMetadata("alice-anchor", "anchor", for: peer, in: store, account: alice)
            let aliceLatest = try await store.latestPosition(for: alice)
            let aliceChanges = try await allChanges(check, of: store, for: alice)

            let bobBefore = try await Self.read(key, in: store, for: bob)
            try require(bobBefore == nil, check, "bob reads alice's \(key) as \(String(describing: bobBefore))")
            let bobSeesMetadata = try await Self.metadata("anchor", for: peer, in: store, account: bob)
            try require(
                bobSeesMetadata == nil, check, "bob reads alice's metadata as \(String(describing: bobSeesMetadata))")
            let bobChanges = try await store.changes(for: bob, after: .start, in: nil, limit: 10)
            try require(
                bobChanges.records.isEmpty, check,
                "bob's changes hold alice's records \(bobChanges.records.map(\.record.key))")
            let bobLatest = try await store.latestPosition(for: bob)
            try require(bobLatest == .start, check, "bob, who wrote nothing, has latest position \(bobLatest)")

            try await Self.put([bobRecord, Self.record("tasks", "bob-only")], in: store, for: bob)
            try await Self.setMetadata("bob-anchor", "anchor", for: peer, in: store, account: bob)
            try await Self.purge(RecordKey(collection: "notes", id: "alice-only"), in: store, for: bob)
            try await Self.setMetadata(nil, "anchor", for: peer, in: store, account: bob)
            try await Self.setMetadata("bob-anchor", "anchor", for: peer, in: store, account: bob)

            let aliceStored = try await Self.read(key, in: store, for: alice)
            try require(
                aliceStored?.record == aliceRecord, check,
                "after bob wrote \(key), alice reads \(String(describing: aliceStored?.record))")
            let bobStored = try await Self.read(key, in: store, for: bob)
            try require(
                bobStored?.record == bobRecord, check, "bob reads his \(key) as \(String(describing: bobStored))")
            let aliceOnly = try await Self.read(RecordKey(collection: "notes", id: "alice-only"), in: store, for: alice)
            try require(aliceOnly != nil, check, "bob's purge of notes/alice-only removed alice's record")
            let aliceMetadata = try await Self.metadata("anchor", for: peer, in: store, account: alice)
            try require(
                aliceMetadata == "alice-anchor", check,
                "after bob set and removed his metadata, alice's reads \(String(describing: aliceMetadata))")
            let bobMetadata = try await Self.metadata("anchor", for: peer, in: store, account: bob)
            try require(bobMetadata == "bob-anchor", check, "bob's metadata reads \(String(describing: bobMetadata))")

            let aliceLatestAfter = try await store.latestPosition(for: alice)
            try require(
                aliceLatestAfter == aliceLatest, check,
                "bob's writes moved alice's latest position from \(aliceLatest) to \(aliceLatestAfter)")
            let aliceChangesAfter = try await allChanges(check, of: store, for: alice)
            try require(
                aliceChangesAfter == aliceChanges, check,
                "bob's writes changed alice's changes to \(aliceChangesAfter.map(\.record))")
            let bobChangesAfter = try await allChanges(check, of: store, for: bob)
            try require(
                Set(bobChangesAfter.map(\.record)) == [bobRecord, Self.record("tasks", "bob-only")], check,
                "bob's changes are \(bobChangesAfter.map(\.record)), expected only his two records")
            let aliceNotes = try await Self.allRecords(in: "notes", of: store, for: alice).map(\.record.id)
            try require(aliceNotes == ["alice-only", "same-id"], check, "alice's notes are \(aliceNotes)")
            let bobTasks = try await Self.allRecords(in: "tasks", of: store, for: bob).map(\.record.id)
            try require(bobTasks == ["bob-only"], check, "bob's tasks are \(bobTasks)")
        }
    }

    /// Checks per-peer metadata: a value reads back as set, per peer and key,
    /// is replaced by a later set, and is removed by setting `nil` without
    /// touching the peer's other keys or other peers; removing a missing key is
    /// no error; metadata never appears in the changes.
    /// - Throws: ``VerificationError`` naming the rule "metadata".
    public func verifyMetadata() async throws {
                try await checking(.metadata) { store, check in
            let account: AccountID = "contract-metadata"
            let phone: PeerID = "phone"
            let laptop: PeerID = "laptop"
            let absent = try await Self.metadata("anchor", for: phone, in: store, account: account)
            try require(absent == nil, check, "metadata never set reads as \(String(describing: absent))")

            let rich: SyncValue = [
                "ids": ["a", "b"], "counter": 42, "when": .date(Self.record("x", "y").version.modifiedAt),
            ]
            try await store.transaction(for: account) { tx in
                try await tx.setMetadata(.integer(1), "anchor", for: phone)
                try await tx.setMetadata("laptop-anchor", "anchor", for: laptop)
                try await tx.setMetadata(rich, "state", for: phone)
            }
            let values: [(PeerID, String, SyncValue?)] = [
                (phone, "anchor", .integer(1)), (laptop, "anchor", "laptop-anchor"), (phone, "state", rich),
                (laptop, "state", nil),
            ]
            for (peer, key, expected) in values {
                let value = try await Self.metadata(key, for: peer, in: store, account: account)
                try require(
                    value == expected, check,
                    "metadata \(key) of \(peer) reads \(String(describing: value)), expected \(String(describing: expected))"
                )
            }

            try await Self.setMetadata(.integer(2), "anchor", for: phone, in: store, account: account)
            let replaced = try await Self.metadata("anchor", for: phone, in: store, account: account)
            try require(
                replaced == .integer(2), check, "a replaced metadata value reads \(String(describing: replaced))")

            try await Self.setMetadata(nil, "anchor", for: phone, in: store, account: account)
            try await Self.setMetadata(nil, "never-set", for: phone, in: store, account: account)
            let removed = try await Self.metadata("anchor", for: phone, in: store, account: account)
            try require(removed == nil, check, "removed metadata reads \(String(describing: removed))")
            let otherKey = try await Self.metadata("state", for: phone, in: store, account: account)
            try require(
                otherKey == rich, check, "removing anchor of phone changed its state to \(String(describing: otherKey))"
            )
            let otherPeer = try await Self.metadata("anchor", for: laptop, in: store, account: account)
            try require(
                otherPeer == "laptop-anchor", check,
                "removing anchor of phone changed laptop's to \(String(describing: otherPeer))")

            let changes = try await store.changes(for: account, after: .start, in: nil, limit: 10)
            try require(changes.records.isEmpty, check, "metadata writes appear as changes \(changes.records)")
        }
    }

    /// Checks that a `limit` below 1 is refused with
    /// ``StoreError/Code/invalidArgument`` by ``SyncStore/changes(for:after:in:limit:)``
    /// and ``StoreTransaction/records(in:after:limit:)``, and that the store
    /// keeps working afterwards.
    /// - Throws: ``VerificationError`` naming the rule "invalid limits rejected".
    public func verifyInvalidLimitsRejected() async throws {
                try await checking(.invalidLimitsRejected) { store, check in
            let account: AccountID = "contract-limits"
            try await Self.put([Self.record("notes", "a")], in: store, for: account)
            for limit in [0, -1, Int.min] {
                try await requireInvalidArgument(check, "changes(limit: \(limit))") {
                    _ = try await store.changes(for: account, after: .start, in: nil, limit: limit)
                }
                try await requireInvalidArgument(check, "records(in:after:limit: \(limit))") {
                    _ = try await store.transaction(for: account) { tx in
                        try await tx.records(in: "notes", after: nil, limit: limit)
                    }
                }
            }
            let batch = try await store.changes(for: account, after: .start, in: nil, limit: 1)
            try require(batch.records.count == 1, check, "changes(limit: 1) after the refusals gave \(batch)")
            try await Self.put([Self.record("notes", "b")], in: store, for: account)
            let listed = try await Self.allRecords(in: "notes", of: store, for: account).map(\.record.id)
            try require(listed == ["a", "b"], check, "after the refusals the notes are \(listed)")
        }
    }
}
