#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// The checks of writing, reading, rolling back and purging records.
extension StoreContractSuite {
    /// Checks that records, tombstones included, read back exactly as written,
    /// each with a position after ``ChangePosition/start``, that an empty
    /// store has no changes, and that a record written as an ``EncodedRecord``
    /// reads back as the same record.
    /// - Throws: ``VerificationError`` naming the rule "round trip".
    public func verifyRoundTrip() async throws {
                try await checking(.roundTrip) { store, check in
            let account: AccountID = "contract-round-trip"
            let empty = try await store.changes(for: account, after: .start, in: nil, limit: 10)
            try require(
                empty == ChangeBatch(records: [], lastPosition: .start, hasMore: false), check,
                "an empty store returned \(empty) for changes after the start")
            let latest = try await store.latestPosition(for: account)
            try require(latest == .start, check, "an empty store's latest position is \(latest), expected 0")

            let missing = RecordKey(collection: "notes", id: "never-written")
            let absent = try await Self.read(missing, in: store, for: account)
            try require(absent == nil, check, "reading \(missing), never written, gave \(String(describing: absent))")

            let full = Self.record("notes", "full", Self.everyKindOfField, second: 1)
            let tombstone = Self.record("notes", "gone", deleted: true, second: 2)
            try await Self.put([full, tombstone], in: store, for: account)

            var positions: [ChangePosition] = []
            for written in [full, tombstone] {
                guard let stored = try await Self.read(written.key, in: store, for: account) else {
                    throw failure(check, "\(written.key) was written but reads back as missing")
                }
                try require(
                    stored.record == written, check,
                    "\(written.key) was written as \(written), read back as \(stored.record)")
                try require(
                    stored.position > .start, check, "\(written.key) was committed at position \(stored.position)")
                positions.append(stored.position)
            }
            try require(positions[0] != positions[1], check, "two records share position \(positions[0])")
            let latestAfter = try await store.latestPosition(for: account)
            try require(
                latestAfter == positions.max(), check,
                "the latest position is \(latestAfter), the records were written at \(positions)")

            let listed = try await Self.allRecords(in: "notes", of: store, for: account)
            try require(
                listed.map(\.record) == [full, tombstone], check,
                "records(in: notes) gave \(listed.map(\.record.key)), expected [notes/full, notes/gone]")

            // A record encoded before its transaction is the same write.
            let encoded = Self.record("encoded", "full", Self.everyKindOfField, second: 3)
            let replaced = Self.record("encoded", "full", ["replaced": true], second: 4)
            let ready = try [encoded, replaced].map(EncodedRecord.init)
            try await store.transaction(for: account) { tx in try await tx.put(ready[0]) }
            guard let readBack = try await Self.read(encoded.key, in: store, for: account), readBack.record == encoded else {
                throw failure(check, "\(encoded.key) was written encoded as \(encoded) and does not read back the same")
            }
            try await store.transaction(for: account) { tx in try await tx.put(ready[1]) }
            let replacedBack = try await Self.read(encoded.key, in: store, for: account)
            try require(
                replacedBack?.record == replaced && replacedBack.map { $0.position > readBack.position } == true, check,
                "\(encoded.key) rewritten encoded as \(replaced) reads back as \(String(describing: replacedBack))")
        }
    }

    /// Checks that a transaction reads its own puts, purges and metadata
    /// changes, in ``StoreTransaction/record(_:)``, in ``StoreTransaction/records(at:)`` (and with a
    /// metadata value, ``StoreTransaction/records(at:withMetadata:for:)``, or with the fields left in the
    /// stored form, ``StoreTransaction/encodedRecords(at:)``) and in id-ordered paging of
    /// ``StoreTransaction/records(in:after:limit:)`` (and with the fields in the stored form,
    /// ``StoreTransaction/encodedRecords(in:after:limit:)``), and that they commit.
    /// - Throws: ``VerificationError`` naming the rule "read your writes".
    public func verifyReadYourWrites() async throws {
                try await checking(.readYourWrites) { store, check in
            let account: AccountID = "contract-read-your-writes"
            let committed = ["b", "d", "f"].map { Self.record("items", RecordID($0), ["v": 1]) }
            try await Self.put(committed, in: store, for: account)
            let peer: PeerID = "peer-1"

            try await store.transaction(for: account) { tx in
                let key = RecordKey(collection: "items", id: "d")
                let before = try await tx.record(key)
                try require(
                    before?.record.fields["v"] == 1, check,
                    "the committed items/d reads as \(String(describing: before))")

                let rewritten = Self.record("items", "d", ["v": 2], second: 5)
                try await tx.put(rewritten)
                let after = try await tx.record(key)
                try require(
                    after?.record == rewritten, check, "after put, items/d reads as \(String(describing: after))")

                for id in ["a", "c", "e"] { try await tx.put(Self.record("items", RecordID(id), ["v": 3])) }
                try await tx.purge(RecordKey(collection: "items", id: "f"))
                let purged = try await tx.record(RecordKey(collection: "items", id: "f"))
                try require(purged == nil, check, "after purge, items/f reads as \(String(describing: purged))")

                // A batched read sees the same: pending puts and purges over committed records, unwritten
                // keys absent; more keys than one database read takes, and a key asked for twice.
                let unwritten = (0..<600).map { RecordKey(collection: "items", id: RecordID("z\($0)")) }
                let asked = ["a", "b", "d", "f", "b"].map { RecordKey(collection: "items", id: RecordID($0)) } + unwritten
                let batch = try await tx.records(at: asked)
                let fields = batch.mapValues { $0.record.fields["v"] }
                try require(
                    fields == [
                        RecordKey(collection: "items", id: "a"): 3, RecordKey(collection: "items", id: "b"): 1,
                        RecordKey(collection: "items", id: "d"): 2,
                    ], check,
                    "records(at:) of a, b, d, f and 600 unwritten keys gave \(fields.sorted { $0.key.id < $1.key.id }), "
                        + "expected a: 3, b: 1, d: 2")
                // The same read with the fields left in the stored form answers the same, once decoded.
                let encoded = try await tx.encodedRecords(at: asked).mapValues { try $0.decoded() }
                try require(
                    encoded == batch, check, "encodedRecords(at:) of the same keys gave \(encoded), records(at:) \(batch)")

                var pages: [[RecordID]] = []
                var cursor: RecordID?
                while pages.count < 10 {
                    let page = try await tx.records(in: "items", after: cursor, limit: 2)
                    let encodedPage = try await tx.encodedRecords(in: "items", after: cursor, limit: 2).map { try $0.decoded() }
                    try require(
                        encodedPage == page, check,
                        "encodedRecords(in: items, after: \(cursor?.rawValue ?? "nil"), limit: 2) gave \(encodedPage), records(in:) \(page)")
                    pages.append(page.map(\.record.id))
                    guard page.count == 2, let last = page.last else { break }
                    cursor = last.record.id
                }
                try require(
                    pages.joined().elementsEqual(["a", "b", "c", "d", "e"]), check,
                    "paging records(in: items, limit: 2) inside the transaction gave \(pages), expected a, b, c, d, e")

                try await tx.setMetadata(.string("anchor-7"), "anchor", for: peer)
                let value = try await tx.metadata("anchor", for: peer)
                try require(
                    value == .string("anchor-7"), check,
                    "metadata set in the transaction reads as \(String(describing: value))")
            }

            let ids = try await Self.allRecords(in: "items", of: store, for: account).map(\.record.id)
            try require(
                ids == ["a", "b", "c", "d", "e"], check, "after commit, items are \(ids), expected a, b, c, d, e")
            let d = try await Self.read(RecordKey(collection: "items", id: "d"), in: store, for: account)
            try require(d?.record.fields["v"] == 2, check, "after commit, items/d reads as \(String(describing: d))")
            let anchor = try await Self.metadata("anchor", for: peer, in: store, account: account)
            try require(
                anchor == .string("anchor-7"), check,
                "after commit, the metadata reads as \(String(describing: anchor))")

            // Records and a metadata value read together: committed, then under this transaction's writes.
            let keys = ["b", "d", "z"].map { RecordKey(collection: "items", id: RecordID($0)) }
            // Committed records read first with their fields left in the stored form, then decoded: the same.
            try await store.transaction(for: account) { tx in
                let encoded = try await tx.encodedRecords(at: keys).mapValues { try $0.decoded() }
                let decoded = try await tx.records(at: keys)
                try require(
                    encoded == decoded && decoded.count == 2, check,
                    "committed b, d read with encodedRecords(at:) as \(encoded), with records(at:) as \(decoded)")
            }
            try await store.transaction(for: account) { tx in
                let together = try await tx.records(at: keys, withMetadata: "anchor", for: peer)
                try require(
                    together.records.mapValues { $0.record.fields["v"] } == [keys[0]: 1, keys[1]: 2]
                        && together.metadata == .string("anchor-7"), check,
                    "records(at: b, d, z, withMetadata: anchor) gave \(together), expected b: 1, d: 2 and anchor-7")
            }

            try await store.transaction(for: account) { tx in
                try await tx.setMetadata(nil, "anchor", for: peer)
                let removed = try await tx.metadata("anchor", for: peer)
                try require(
                    removed == nil, check, "metadata removed in the transaction reads as \(String(describing: removed))"
                )
                try await tx.put(Self.record("items", "b", ["v": 4], second: 6))
                let together = try await tx.records(at: keys, withMetadata: "anchor", for: peer)
                try require(
                    together.records.mapValues { $0.record.fields["v"] } == [keys[0]: 4, keys[1]: 2] && together.metadata == nil,
                    check, "after a put of b and the metadata's removal, records(at:withMetadata:) gave \(together)")
            }
        }
    }

    /// Checks that a transaction whose body throws leaves nothing behind:
    /// no record put or purged, no metadata changed, no change position taken;
    /// that the body's error reaches the caller; and that the account's next
    /// transaction runs and commits after everything committed before.
    /// - Throws: ``VerificationError`` naming the rule "rollback on throw".
    public func verifyRollbackOnThrow() async throws {
                try await checking(.rollbackOnThrow) { store, check in
            let account: AccountID = "contract-rollback"
            let peer: PeerID = "peer-1"
            let kept = Self.record("notes", "kept", ["v": 1])
            let doomed = Self.record("notes", "doomed", ["v": 1])
            try await Self.put([kept, doomed], in: store, for: account)
            try await Self.setMetadata(.integer(1), "anchor", for: peer, in: store, account: account)
            let positionBefore = try await store.latestPosition(for: account)
            let changesBefore = try await allChanges(check, of: store, for: account)

            do {
                try await store.transaction(for: account) { tx in
                    try await tx.put(Self.record("notes", "kept", ["v": 2], second: 9))
                    try await tx.put(Self.record("notes", "new", ["v": 2]))
                    try await tx.put(Self.record("notes", "new-tombstone", deleted: true))
                    try await tx.purge(doomed.key)
                    try await tx.setMetadata(.integer(2), "anchor", for: peer)
                    try await tx.setMetadata(.string("x"), "other", for: peer)
                    throw ContractRollbackProbe()
                }
                throw failure(check, "the transaction returned although its body threw")
            } catch is ContractRollbackProbe {
                // The body's own error reached the caller.
            } catch let error as VerificationError {
                throw error
            } catch {
                throw failure(check, "the transaction threw \(error) instead of the body's error")
            }

            let records = try await Self.allRecords(in: "notes", of: store, for: account).map(\.record)
            try require(
                records == [doomed, kept], check,
                "after rollback the records are \(records.map(\.key)) \(records.map(\.fields)), expected the committed two"
            )
            let anchor = try await Self.metadata("anchor", for: peer, in: store, account: account)
            try require(
                anchor == .integer(1), check, "after rollback the metadata anchor is \(String(describing: anchor))")
            let other = try await Self.metadata("other", for: peer, in: store, account: account)
            try require(other == nil, check, "after rollback the metadata set in it reads \(String(describing: other))")
            let positionAfter = try await store.latestPosition(for: account)
            try require(
                positionAfter == positionBefore, check,
                "the latest position moved from \(positionBefore) to \(positionAfter)")
            let changesAfter = try await allChanges(check, of: store, for: account)
            try require(changesAfter == changesBefore, check, "the changes differ after the rollback: \(changesAfter)")

            let next = Self.record("notes", "next", ["v": 3])
            try await Self.put([next], in: store, for: account)
            let stored = try await Self.read(next.key, in: store, for: account)
            try require(
                stored.map { $0.position > positionBefore } == true, check,
                "the transaction after the rollback committed at \(String(describing: stored?.position)), "
                    + "not after \(positionBefore)")
        }
    }

    /// Checks that a record written again — in later transactions, or twice
    /// in one — appears once in the changes, at its last write, with its
    /// last fields.
    /// - Throws: ``VerificationError`` naming the rule "rewrite appears once".
    public func verifyRewriteAppearsOnce() async throws {
                try await checking(.rewriteAppearsOnce) { store, check in
            let account: AccountID = "contract-rewrite"
            try await Self.putEach(
                [Self.record("notes", "a", ["v": 1]), Self.record("notes", "b"), Self.record("notes", "c")],
                in: store, for: account)
            try await Self.put([Self.record("notes", "a", ["v": 2], second: 1)], in: store, for: account)
            let last = Self.record("notes", "a", ["v": 3], second: 2)
            try await Self.put([last], in: store, for: account)
            let twiceInOne = Self.record("notes", "d", ["v": 2], second: 3)
            try await store.transaction(for: account) { tx in
                try await tx.put(Self.record("notes", "d", ["v": 1], second: 3))
                try await tx.put(twiceInOne)
            }

            let changes = try await allChanges(check, of: store, for: account, limit: 2)
            try requireDistinctKeys(changes, check)
            let ids = changes.map(\.record.id)
            try require(ids == ["b", "c", "a", "d"], check, "the changes are \(ids), expected b, c, a, d")
            try require(
                changes[2].record == last, check, "notes/a appears as \(changes[2].record), expected its last write")
            try require(
                changes[3].record == twiceInOne, check,
                "notes/d appears as \(changes[3].record), expected its last write")
            let stored = try await Self.read(last.key, in: store, for: account)
            try require(
                stored?.position == changes[2].position, check,
                "notes/a reads at position \(String(describing: stored?.position)), the changes say \(changes[2].position)"
            )

            let afterB = try await allChanges(check, of: store, for: account, after: changes[0].position)
            try require(
                afterB.map(\.record.id) == ["c", "a", "d"], check,
                "the changes after notes/b are \(afterB.map(\.record.id)), expected c, a, d")
        }
    }

    /// Checks that purging removes a record — live or tombstone — from reads,
    /// listings and changes without touching others, that purging a key never
    /// written is no error, and that writing a purged key again brings it back
    /// at a new position.
    /// - Throws: ``VerificationError`` naming the rule "purge".
    public func verifyPurge() async throws {
                try await checking(.purge) { store, check in
            let account: AccountID = "contract-purge"
            try await Self.putEach(
                [Self.record("notes", "a"), Self.record("notes", "b"), Self.record("notes", "c")], in: store,
                for: account)
            try await Self.put([Self.record("notes", "b", deleted: true, second: 1)], in: store, for: account)
            let latestBefore = try await store.latestPosition(for: account)

            try await Self.purge(RecordKey(collection: "notes", id: "b"), in: store, for: account)
            try await Self.purge(RecordKey(collection: "notes", id: "c"), in: store, for: account)
            try await Self.purge(RecordKey(collection: "notes", id: "never-written"), in: store, for: account)

            for id: RecordID in ["b", "c"] {
                let key = RecordKey(collection: "notes", id: id)
                let stored = try await Self.read(key, in: store, for: account)
                try require(stored == nil, check, "purged \(key) still reads as \(String(describing: stored))")
            }
            let listed = try await Self.allRecords(in: "notes", of: store, for: account).map(\.record.id)
            try require(listed == ["a"], check, "after purging b and c, records(in: notes) gives \(listed)")
            let changes = try await allChanges(check, of: store, for: account)
            try require(
                changes.map(\.record.id) == ["a"], check,
                "after purging b and c, the changes are \(changes.map(\.record.id)), expected a")

            let again = Self.record("notes", "c", ["v": 2], second: 2)
            try await Self.put([again], in: store, for: account)
            let stored = try await Self.read(again.key, in: store, for: account)
            try require(
                stored?.record == again, check, "notes/c written after purge reads as \(String(describing: stored))")
            try require(
                stored.map { $0.position > latestBefore } == true, check,
                "notes/c written after purge has position \(String(describing: stored?.position)), "
                    + "not after \(latestBefore)")
            let changesAfter = try await allChanges(check, of: store, for: account)
            try require(
                changesAfter.map(\.record.id) == ["a", "c"], check,
                "after writing notes/c again, the changes are \(changesAfter.map(\.record.id)), expected a, c")
        }
    }

    /// Field values of every kind, nested, that a store must keep exactly.
    static var everyKindOfField: [String: SyncValue] {
        [
            "null": .null,
            "string": "Ada Lovelace — ✓ 𝔸",
            "empty": "",
            "integer": .integer(Int64.min),
            "unsigned": .unsignedInteger(UInt64.max),
            "real": .real(-0.1),
            "bool": true,
            "date": .date(Date(timeIntervalSince1970: 1_700_000_000.5)),
            "data": .data([0, 1, 0xFF]),
            "array": [1, "two", .array([]), .null],
            "dictionary": ["nested": ["deeper": .dictionary([:])], "n": 2.5],
        ]
    }

    /// ``SyncStore/readCommitted(for:_:)`` reads the account's committed records and metadata, and
    /// refuses a write with ``StoreError/Code/invalidArgument``, writing nothing.
    /// - Throws: ``VerificationError`` when the store breaks the rule.
    public func verifyReadCommitted() async throws {
                try await checking(.readCommitted) { store, check in
            let account: AccountID = "contract-read-committed"
            let peer: PeerID = "peer-1"
            let committed = Self.record("items", "a", ["v": 1])
            try await Self.put([committed], in: store, for: account)
            try await Self.setMetadata(.integer(7), "anchor", for: peer, in: store, account: account)
            let (record, value) = try await store.readCommitted(for: account) { tx in
                (try await tx.record(committed.key), try await tx.metadata("anchor", for: peer))
            }
            try require(record?.record == committed, check, "items/a reads as \(String(describing: record))")
            try require(value == .integer(7), check, "metadata anchor reads as \(String(describing: value))")

            let written = Self.record("items", "b", ["v": 2])
            try await requireInvalidArgument(check, "a put in readCommitted") {
                try await store.readCommitted(for: account) { tx in try await tx.put(written) }
            }
            let after = try await store.transaction(for: account) { tx in try await tx.record(written.key) }
            try require(after == nil, check, "the put refused in readCommitted stored \(String(describing: after))")
        }
    }
}

