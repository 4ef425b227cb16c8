import Aquasync
import SyncCore
import Testing

@Suite("DeltaPack: reading a pack takes its deltas apart without touching a shared value, and names a bad delta")
struct DeltaPackReadingTests {
    static let gid = "0f8fad5b-d9cb-469f-a165-70867728950e"
    static let token = "9c1e0b7a-5b7e-4c61-9a8e-1d2f3a4b5c6d"

    static func delta(name: String, ust: Int64) -> SyncValue {
        ["gid": .string(gid), "deviceToken": .string(token), "localTimestamp": 1_700_000_000_123, "isDeleted": false,
         "ust": .integer(ust), "name": .string(name)]
    }

    @Test("the deltas' fields leave out the sync columns, and a value still held elsewhere keeps them")
    func readsWithoutChangingASharedValue() throws {
        let value: SyncValue = ["latestUST": 9, "hasMore": true, "Contact": [Self.delta(name: "Ada", ust: 8)]]
        let kept = value
        let pack = try DeltaPack(value, requireID: false)
        #expect(pack.latestUST == 9)
        #expect(pack.hasMore)
        let delta = try #require(pack.models["Contact"]?.first)
        #expect(delta.fields == ["name": "Ada"])
        #expect(delta.gid == Self.gid && delta.deviceToken == Self.token && delta.ust == 8)
        #expect(delta.localTimestamp == 1_700_000_000_123 && !delta.isDeleted)
        // Value semantics: the copy made before the pack was read is whole.
        #expect(kept["Contact"] == [Self.delta(name: "Ada", ust: 8)])
    }

    @Test("a bad delta is named by its model and place in the pack", arguments: [
        (SyncValue.array([Self.delta(name: "Ada", ust: 1), "not a delta"]), "Contact[1] is not a dictionary"),
        (SyncValue.array([["deviceToken": .string(Self.token), "localTimestamp": 1]]), "Contact[0].gid is missing"),
        (SyncValue.array([["gid": "NOT-A-UUID", "deviceToken": .string(Self.token), "localTimestamp": 1]]),
         "Contact[0].gid must be a lowercase UUID"),
        (SyncValue.array([["gid": .string(Self.gid), "deviceToken": .string(Self.token), "localTimestamp": "soon"]]),
         "Contact[0].localTimestamp must be an integer"),
    ])
    func namesTheBadDelta(_ deltas: SyncValue, _ message: String) throws {
        let error = try #require(throws: AquasyncValidationError.self) {
            try DeltaPack(["Contact": deltas], requireID: false)
        }
        #expect(error.description.contains(message), "\(error.description)")
    }
}
