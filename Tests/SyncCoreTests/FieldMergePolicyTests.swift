import FoundationEssentials
import SyncCore
import Testing

@Suite("Field merge policy")
struct FieldMergePolicyTests {
    typealias Support = ConflictTestSupport

    let base = Support.record(["name": "Ada", "phone": "1", "city": "London"], at: 10, by: "server")

    @Test func oneSidedChangesFromBothSidesAreCombined() async throws {
        let server = Support.record(["name": "Ada Lovelace", "phone": "1", "city": "London"], at: 20, by: "server")
        let client = Support.record(["name": "Ada", "phone": "2", "email": "ada@example.org"], at: 30, by: "phone-1")
        let outcomes = await Support.outcomesOnBothSides(.fieldMerge(), server: server, client: client, base: base)
        let merged = try #require(outcomes.server)
        // name changed on the server, phone changed, email added and city removed on the client.
        #expect(merged.fields == ["name": "Ada Lovelace", "phone": "2", "email": "ada@example.org"])
        #expect(merged.version == client.version)
        #expect(merged.isDeleted == false)
        #expect(outcomes.client == merged)
    }

    @Test func aFieldChangedOnBothSidesGoesToTheNewerVersion() async throws {
        let server = Support.record(["name": "Ada (server)", "phone": "1", "city": "Paris"], at: 40, by: "server")
        let client = Support.record(["name": "Ada (client)", "phone": "9", "city": "London"], at: 30, by: "phone-1")
        let outcomes = await Support.outcomesOnBothSides(.fieldMerge(), server: server, client: client, base: base)
        let merged = try #require(outcomes.server)
        #expect(merged.fields == ["name": "Ada (server)", "phone": "9", "city": "Paris"])
        #expect(outcomes.client == merged)
    }

    @Test func theFallbackDecidesConflictingFields() async throws {
        let server = Support.record(["name": "Ada (server)", "phone": "1", "city": "London"], at: 40, by: "server")
        let client = Support.record(["name": "Ada (client)", "phone": "1", "city": "Leeds"], at: 30, by: "phone-1")
        let policy = FieldMergePolicy(fallback: .clientWins)
        let outcomes = await Support.outcomesOnBothSides(policy, server: server, client: client, base: base)
        // Every field the client changed wins; the merge equals the client's record, so it is named, not rebuilt.
        #expect(outcomes.server == client)
        #expect(outcomes.client == client)
        let (onServer, onClient) = await Support.resolveOnBothSides(policy, server: server, client: client, base: base)
        #expect(onServer == .takeRemote)
        #expect(onClient == .keepLocal)
    }

    @Test func bothSidesMakingTheSameChangeIsNoConflict() async {
        let server = Support.record(["name": "Ada L", "phone": "1", "city": "London"], at: 20, by: "server")
        let client = Support.record(["name": "Ada L", "phone": "1", "city": "London"], at: 30, by: "phone-1")
        let asked = DeferredPolicy { _ in .deferred }
        let outcomes = await Support.outcomesOnBothSides(
            FieldMergePolicy(fallback: asked), server: server, client: client, base: base)
        #expect(outcomes.server == client)
        #expect(outcomes.client == client)
    }

    @Test func anAskingFallbackSeesOnlyTheConflictingField() async {
        let server = Support.record(["name": "Ada (server)", "phone": "7", "city": "London"], at: 40, by: "server")
        let client = Support.record(["name": "Ada (client)", "phone": "1", "city": "London"], at: 30, by: "phone-1")
        let policy = FieldMergePolicy(
            fallback: DeferredPolicy { conflict in
                conflict.local.fields.keys.sorted() == ["name"] && conflict.remote.fields.keys.sorted() == ["name"]
                    && conflict.base?.fields == ["name": "Ada"] ? .deferred : .keepBoth
            })
        let (onServer, onClient) = await Support.resolveOnBothSides(policy, server: server, client: client, base: base)
        #expect(onServer == .deferred)
        #expect(onClient == .deferred)
    }

    @Test func aFallbackMergeSuppliesTheFieldValue() async throws {
        let server = Support.record(["name": "Ada (server)"], at: 40, by: "server")
        let client = Support.record(["name": "Ada (client)"], at: 30, by: "phone-1")
        let joined = DeferredPolicy { conflict in
            var record = conflict.local
            record.fields = ["name": "Ada (both)"]
            return .merged(record)
        }
        let outcomes = await Support.outcomesOnBothSides(
            FieldMergePolicy(fallback: joined), server: server, client: client,
            base: Support.record(["name": "Ada"], at: 10, by: "server"))
        let merged = try #require(outcomes.server)
        #expect(merged.fields == ["name": "Ada (both)"])
        #expect(outcomes.client == merged)
    }

    @Test func theModificationWinsOverADeletionByDefault() async {
        let deleted = base.tombstone(version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 50), node: "server"))
        let modified = Support.record(["name": "Ada", "phone": "2", "city": "London"], at: 20, by: "phone-1")
        let (onServer, onClient) = await Support.resolveOnBothSides(
            .fieldMerge(), server: deleted, client: modified, base: base)
        #expect(onServer == .takeRemote)
        #expect(onClient == .keepLocal)
    }

    @Test func theDeletionWinsWhenConfiguredSo() async {
        let deleted = base.tombstone(version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 5), node: "phone-1"))
        let modified = Support.record(["name": "Ada", "phone": "2", "city": "London"], at: 20, by: "server")
        let (onServer, onClient) = await Support.resolveOnBothSides(
            .fieldMerge(deletionRule: .deletionWins), server: modified, client: deleted, base: base)
        #expect(onServer == .takeRemote)
        #expect(onClient == .keepLocal)
    }

    @Test func theFallbackDecidesADeletionWhenConfiguredSo() async {
        let deleted = base.tombstone(version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 5), node: "phone-1"))
        let modified = Support.record(["name": "Ada", "phone": "2", "city": "London"], at: 20, by: "server")
        let outcomes = await Support.outcomesOnBothSides(
            .fieldMerge(fallback: .clientWins, deletionRule: .fallback), server: modified, client: deleted, base: base)
        #expect(outcomes.server == deleted)
        #expect(outcomes.client == deleted)
    }

    @Test func aDeletionWinsOverASideThatDidNotChange() async {
        let deleted = base.tombstone(version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 5), node: "phone-1"))
        let untouched = Support.record(base.fields, at: 20, by: "server")
        let outcomes = await Support.outcomesOnBothSides(.fieldMerge(), server: untouched, client: deleted, base: base)
        #expect(outcomes.server == deleted)
        #expect(outcomes.client == deleted)
    }

    @Test func twoDeletionsKeepTheNewerTombstone() async {
        let early = base.tombstone(version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 20), node: "server"))
        let late = base.tombstone(version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 30), node: "phone-1"))
        let outcomes = await Support.outcomesOnBothSides(.fieldMerge(), server: early, client: late, base: base)
        #expect(outcomes.server == late)
        #expect(outcomes.client == late)
    }

    @Test func withoutABaseTheFallbackDecidesTheWholeRecord() async {
        let server = Support.record(["name": "Ada (server)", "phone": "1"], at: 40, by: "server")
        let client = Support.record(["name": "Ada", "phone": "2"], at: 30, by: "phone-1")
        let outcomes = await Support.outcomesOnBothSides(.fieldMerge(), server: server, client: client)
        #expect(outcomes.server == server)
        #expect(outcomes.client == server)

        let byClient = await Support.outcomesOnBothSides(.fieldMerge(fallback: .clientWins), server: server, client: client)
        #expect(byClient.server == client)
        #expect(byClient.client == client)
    }
}
