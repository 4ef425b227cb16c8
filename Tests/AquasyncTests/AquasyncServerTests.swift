import Aquasync
import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import TestSupport
import Testing

@Suite("Aquasync server: validation, accounts and concurrent readers")
struct AquasyncServerTests {
    static let token = "0f8fad5b-d9cb-469f-a165-70867728950e"
    static let gid = "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b"

    static func pack(_ deltas: [SyncValue], model: String = "Contact", id: SyncValue = "9b2e7c4a-1d3f-4a5b-8c6d-7e8f9a0b1c2d")
        -> SyncValue
    {
        .dictionary(["_id": id, model: .array(deltas)])
    }

    static let validFields: [String: SyncValue] = ["gid": .string(gid), "deviceToken": .string(token), "localTimestamp": 7, "name": "Ada"]
    static var valid: SyncValue { .dictionary(validFields) }

    @Test(
        "an invalid delta gets 422 and nothing of its pack is applied",
        arguments: [
            ("uppercase gid", ["gid": "6F1C8A3E-2B4D-4E5F-8A9B-0C1D2E3F4A5B", "deviceToken": .string(token), "localTimestamp": 1]),
            ("missing deviceToken", ["gid": "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5c", "localTimestamp": 1]),
            ("missing localTimestamp", ["gid": "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5c", "deviceToken": .string(token)]),
            ("text timestamp", ["gid": "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5c", "deviceToken": .string(token), "localTimestamp": "soon"]),
            ("wrong isDeleted", ["gid": "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5c", "deviceToken": .string(token), "localTimestamp": 1, "isDeleted": "yes"]),
            ("not a dictionary", "just text"),
            ("a field name starting with _", ["gid": "6f1c8a3e-2b4d-4e5f-8a9b-0c1d2e3f4a5c", "deviceToken": .string(token), "localTimestamp": 1, "_secret": 1]),
        ] as [(String, SyncValue)], TransportRoute.allCases)
    func invalidDeltaRefused(_ invalid: (label: String, delta: SyncValue), route: TransportRoute) async throws {
        let (label, delta) = invalid
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let response = try await transport.send(.pushJSON(Self.pack([Self.valid, delta])))
            #expect(response.status == 422, "\(label)")
            let body = try JSONCodec().decode(response.body)
            #expect(body["id"] == "validation_error")
            #expect(body["message"]?.stringValue?.isEmpty == false)
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == .start)
        }
    }

    @Test("a pack read straight into the stored form (JSON, MessagePack) is stored as the same records as read as values")
    func storedFormReadStoresTheSameRecords() async throws {
        // JSON and MessagePack are read into the stored form; binary plist, which cannot be, is read as values:
        // the same deltas (random fields of the types all three carry, columns in plain and in other accepted forms).
        var random = RandomValues(seed: 41, features: [], maxDepth: 3)
        var deltas: [SyncValue] = []
        for index in 0..<60 {
            var fields = (random.nextDictionary().dictionaryValue ?? [:]).filter { !$0.key.hasPrefix("_") && !Delta.syncColumns.contains($0.key) }
            fields["gid"] = .string(String(format: "6f1c8a3e-2b4d-4e5f-8a9b-%012x", index))
            fields["deviceToken"] = .string(Self.token)
            fields["localTimestamp"] = .integer(Int64(1_000 + index))
            switch index % 4 {
            case 0: fields["isDeleted"] = .bool(index % 8 == 0)
            case 1: fields["isDeleted"] = .integer(1)  // accepted for a Boolean, read as a delta
            case 2:  // a server's column a device need not send: dropped
                fields["isDeleted"] = .bool(false)
                fields["ust"] = .integer(99)
            default: break  // isDeleted missing: false
            }
            deltas.append(.dictionary(fields))
        }
        let pack = Self.pack(deltas)
        var stored: [TestCodec: [StoredRecord]] = [:]
        for codec in [TestCodec.json, .msgpack, .binaryPlist] {
            let harness = AquasyncHarness()
            let request = SyncRequest(
                method: .post, path: "/deltas", contentType: codec.codec.primaryMediaType, body: try codec.codec.encode(pack))
            let response = try await harness.send(request)
            #expect(response.status == 200, "\(codec)")
            stored[codec] = try await harness.serverStore.transaction(for: harness.account) { tx in
                try await tx.records(in: "aquasync/Contact", after: nil, limit: 1_000)
            }
        }
        #expect(stored[.json]?.count == deltas.count)
        #expect(stored[.json]?.map(\.record) == stored[.binaryPlist]?.map(\.record))
        #expect(stored[.msgpack]?.map(\.record) == stored[.binaryPlist]?.map(\.record))
    }

    @Test("a timestamp sent as a date too far from 1970 gets 422, and a record stamped at the end of time can still be edited")
    func timestampsAtTheEnds() async throws {
        let harness = AquasyncHarness()
        let codec = TestCodec.binaryPlist.codec
        var far = Self.validFields
        far["localTimestamp"] = .date(Date(timeIntervalSince1970: 1e300))
        let request = SyncRequest(
            method: .post, path: "/deltas", contentType: codec.primaryMediaType, accept: codec.primaryMediaType,
            body: try codec.encode(Self.pack([.dictionary(far)])))
        let response = try await harness.send(request)
        #expect(response.status == 422)
        #expect(try codec.decode(response.body)["message"]?.stringValue?.contains("localTimestamp") == true)

        // A version stamped Int64.max, as a server may hand out, edited locally: the edit keeps the stamp.
        var last = Self.validFields
        last["localTimestamp"] = .integer(.max)
        #expect(try await harness.send(.pushJSON(Self.pack([.dictionary(last)]))).status == 200)
        let device = harness.client(.json)
        try await device.sync()
        try await device.records.save("Contact", gid: Self.gid, fields: ["name": "Grace"])
        #expect(try await device.records.object("Contact", gid: Self.gid)?.localTimestamp == .max)
    }

    @Test("a pack without a lowercase UUID _id is refused", arguments: TransportRoute.allCases)
    func packIDRequired(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport throws in
            for id: SyncValue in ["not-a-uuid", 12] {
                #expect(try await transport.send(.pushJSON(Self.pack([Self.valid], id: id))).status == 422)
            }
            let withoutID: SyncValue = ["Contact": [Self.valid]]
            #expect(try await transport.send(.pushJSON(withoutID)).status == 422)
        }
    }

    @Test("declared models refuse unknown models and mistyped fields, and normalise dates sent as text", arguments: TransportRoute.allCases)
    func declaredModels(route: TransportRoute) async throws {
        var harness = AquasyncHarness()
        harness.models = [AquasyncModel("Contact", fields: ["name": .string, "born": .date], required: ["name"])]
        try await harness.withTransport(route) { transport in
            #expect(try await transport.send(.pushJSON(Self.pack([Self.valid], model: "Invoice"))).status == 422)
            var mistyped = Self.validFields
            mistyped["name"] = 42
            #expect(try await transport.send(.pushJSON(Self.pack([.dictionary(mistyped)]))).status == 422)
            var missing = Self.validFields
            missing["name"] = nil
            #expect(try await transport.send(.pushJSON(Self.pack([.dictionary(missing)]))).status == 422)

            var dated = Self.validFields
            dated["born"] = "1815-12-10T00:00:00Z"
            #expect(try await transport.send(.pushJSON(Self.pack([.dictionary(dated)]))).status == 200)
            let device = harness.client(.xmlPlist, through: transport)
            try await device.sync()
            let born = try #require(try await device.object("Contact", gid: Self.gid)?.fields["born"])
            #expect(born.kind == .date)
        }
    }

    @Test("malformed bodies get 400, unknown routes 404, an unknown content type 415", arguments: TransportRoute.allCases)
    func protocolErrors(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport throws in
            let garbage = SyncRequest(method: .post, path: "/deltas", contentType: "application/json", body: Array("{\"_id\":".utf8))
            #expect(try await transport.send(garbage).status == 400)
            #expect(try await transport.send(SyncRequest(method: .get, path: "/deltas/from:-1")).status == 400)
            #expect(try await transport.send(SyncRequest(method: .get, path: "/deltas/from:0?deviceToken=ABC")).status == 400)
            #expect(try await transport.send(SyncRequest(method: .get, path: "/deltas/everything")).status == 404)
            #expect(try await transport.send(SyncRequest(method: .get, path: "/deltas")).status == 405)
            let unknownType = SyncRequest(method: .post, path: "/deltas", contentType: "text/csv", body: Array("a,b".utf8))
            #expect(try await transport.send(unknownType).status == 415)
            #expect(try await harness.serverStore.latestPosition(for: harness.account) == .start)
        }
    }

    @Test("a pull answers in the puller's codec: a null field pushed in JSON reaches a JSON device and is left out for a property list one; a device's own deltas are skipped", arguments: TransportRoute.allCases)
    func pullAnswersInThePullersCodec(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route) { transport in
            let writer = harness.client(.json, through: transport)
            let gid = try await writer.save("Contact", fields: ["name": "Ada", "nickname": .null])
            try await writer.sync()
            #expect(try await writer.sync().pulled == 0, "the writer's own delta does not come back")
            let jsonDevice = harness.client(.json, through: transport)
            #expect(try await jsonDevice.sync().pulled == 1)
            #expect(try await jsonDevice.object("Contact", gid: gid)?.fields == ["name": "Ada", "nickname": .null])
            let plistDevice = harness.client(.xmlPlist, through: transport)
            #expect(try await plistDevice.sync().pulled == 1)
            #expect(try await plistDevice.object("Contact", gid: gid)?.fields == ["name": "Ada"])
            #expect(try await plistDevice.latestUST() == (try await jsonDevice.latestUST()))
        }
    }

    @Test("one account never sees another's records", arguments: TransportRoute.allCases)
    func accountsAreSeparate(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route, credentials: nil) { transport in
            let ada = transport.with(CredentialsMiddleware(TransportRoute.ada))
            let bob = transport.with(CredentialsMiddleware(TransportRoute.bob))
            let adaDevice = harness.client(.json, through: ada)
            let bobDevice = harness.client(.json, through: bob)
            try await adaDevice.save("Contact", fields: ["name": "private to Ada"])
            try await adaDevice.sync()
            #expect(try await bobDevice.sync().pulled == 0)
            #expect(try await bobDevice.objects("Contact").isEmpty)
            let secondAdaDevice = harness.client(.json, through: ada)
            #expect(try await secondAdaDevice.sync().pulled == 1)
        }
    }

    @Test("without credentials the server answers 401 and the device reports it", arguments: TransportRoute.allCases)
    func unauthorized(route: TransportRoute) async throws {
        let harness = AquasyncHarness()
        try await harness.withTransport(route, credentials: nil) { transport in
            let device = harness.client(.json, through: transport)
            try await device.save("Contact", fields: ["name": "Ada"])
            let error = await #expect(throws: AquasyncClientError.self) { try await device.sync() }
            #expect(error?.status == 401)
        }
    }

    @Test("many writers push at once while readers pull in a loop: every reader ends with every change")
    func concurrentWritersAndReaders() async throws {
        let harness = AquasyncHarness()
        let writers = 8
        let recordsPerWriter = 40
        let readers = (0..<3).map { _ in harness.client(.json) }
        let done = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<writers {
                group.addTask {
                    let writer = harness.client(.json)
                    for index in 0..<recordsPerWriter {
                        try await writer.save("Event", fields: ["index": .integer(Int64(index))])
                        if index % 5 == 4 { try await writer.pushSync() }
                    }
                    try await writer.pushSync()
                    done.increment()
                }
            }
            for reader in readers {
                group.addTask {
                    while done.count < writers { try await reader.pullSync() }
                    try await reader.pullSync()
                }
            }
            try await group.waitForAll()
        }
        for reader in readers {
            #expect(try await reader.objects("Event").count == writers * recordsPerWriter)
        }
    }
}
