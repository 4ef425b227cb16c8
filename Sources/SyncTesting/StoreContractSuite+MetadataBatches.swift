import SyncCore

/// The check of metadata read by many keys at once and removed by key prefix.
extension StoreContractSuite {
    /// Checks ``SyncCore/StoreTransaction/metadata(at:for:)`` and
    /// ``SyncCore/StoreTransaction/removeMetadata(keysStartingWith:for:)``: a read of many keys (more than
    /// one batch of the durable stores) answers what reading each key would, the transaction's own writes
    /// and removals included; a removal by prefix takes exactly the peer's keys that start with the
    /// prefix as bytes, drops the transaction's earlier writes under it and keeps its later ones, leaves
    /// other peers and accounts alone, and is undone with the rest of a transaction that throws.
    /// - Throws: ``VerificationError`` naming the rule "metadata batches".
    public func verifyMetadataBatches() async throws {
                try await checking(.metadataBatches) { store, check in
            let account: AccountID = "contract-metadata-batches"
            let (device, other): (PeerID, PeerID) = ("device", "other")
            let mapped = (0..<1_200).map { "map/\($0)" }
            // "map" and "mapx" are outside "map/"; "accent/e\u{301}1" (a decomposed é) is outside the prefix
            // "accent/\u{E9}" (a precomposed one) as bytes, though Swift's String calls the two equal.
            let outside = ["map", "mapx/1", "maq/1", "other/1", "accent/e\u{301}1"]
            try await store.transaction(for: account) { tx in
                for (index, key) in mapped.enumerated() { try await tx.setMetadata(.integer(Int64(index)), key, for: device) }
                for key in outside { try await tx.setMetadata("kept", key, for: device) }
                try await tx.setMetadata("other peer", "map/1", for: other)
            }
            try await store.transaction(for: "contract-metadata-neighbour") { tx in
                try await tx.setMetadata("neighbour", "map/1", for: device)
            }

            // A batched read: every committed key, one never set, one set and one removed in the transaction.
            let asked = mapped + ["map/never", "map/new", "map/0"]
            let read = try await store.transaction(for: account) { tx in
                try await tx.setMetadata("new", "map/new", for: device)
                try await tx.setMetadata(nil, "map/0", for: device)
                return try await tx.metadata(at: asked, for: device)
            }
            var expected = Dictionary(uniqueKeysWithValues: mapped.enumerated().map { ($1, SyncValue.integer(Int64($0))) })
            expected["map/0"] = nil
            expected["map/new"] = "new"
            try require(
                read == expected, check,
                "a read of \(asked.count) keys answered \(read.count) values; differing: \(read.filter { expected[$0.key] != $0.value }.prefix(3)), missing: \(expected.keys.filter { read[$0] == nil }.prefix(3))"
            )
            let committed = try await store.transaction(for: account) { tx in
                try await tx.metadata(at: ["map/new", "map/0", "map/1"], for: device)
            }
            try require(
                committed == ["map/new": "new", "map/1": .integer(1)], check,
                "after a transaction set map/new and removed map/0, a batched read answers \(committed)")

            // A removal that throws is undone.
            struct Abandon: Error {}
            do {
                try await store.transaction(for: account) { tx in
                    try await tx.removeMetadata(keysStartingWith: "map/", for: device)
                    throw Abandon()
                }
            } catch is Abandon {}
            let afterThrow = try await store.transaction(for: account) { tx in try await tx.metadata(at: mapped, for: device) }
            try require(
                afterThrow.count == mapped.count - 1, check,
                "a removal whose transaction threw left \(afterThrow.count) of \(mapped.count - 1) values")

            // The removal: writes before it go, writes after it stay, and reads in the transaction see both.
            let inTransaction = try await store.transaction(for: account) { tx in
                try await tx.setMetadata("written before", "map/before", for: device)
                try await tx.removeMetadata(keysStartingWith: "map/", for: device)
                try await tx.removeMetadata(keysStartingWith: "accent/\u{E9}", for: device)
                try await tx.setMetadata("written after", "map/after", for: device)
                return (
                    try await tx.metadata(at: ["map/1", "map/before", "map/after"], for: device),
                    try await tx.metadata("map/2", for: device)
                )
            }
            try require(
                inTransaction.0 == ["map/after": "written after"] && inTransaction.1 == nil, check,
                "inside the removing transaction, reads answer \(inTransaction.0) and map/2 = \(String(describing: inTransaction.1))")
            let left = try await store.transaction(for: account) { tx in
                try await tx.metadata(at: mapped + outside + ["map/before", "map/after"], for: device)
            }
            try require(
                left == Dictionary(uniqueKeysWithValues: outside.map { ($0, SyncValue.string("kept")) }).merging(["map/after": "written after"]) { a, _ in a },
                check, "after removing the keys starting with map/, the device's keys read \(left.sorted { $0.key < $1.key }.prefix(8))")
            let otherPeer = try await Self.metadata("map/1", for: other, in: store, account: account)
            try require(otherPeer == "other peer", check, "removing the device's keys changed another peer's to \(String(describing: otherPeer))")
            let neighbour = try await Self.metadata("map/1", for: device, in: store, account: "contract-metadata-neighbour")
            try require(neighbour == "neighbour", check, "removing one account's keys changed another account's to \(String(describing: neighbour))")
        }
    }
}
