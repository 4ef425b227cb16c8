import Foundation
import SyncCore
import SyncJSON
import SyncMessagePack
import Testing

@testable import Aquasync

/// A pulled page read from JSON or MessagePack straight into the stored form must store exactly what
/// reading it as values stores (``ValuesOnly`` takes that path), and refuse what that path refuses, in
/// the same words.
@Suite("A pulled page: read straight into the stored form, it stores what decoding stores")
struct PulledPageTests {
    static let (gid, otherGid) = ("0f8fad5b-d9cb-469f-a165-70867728950e", "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed")
    static let token = "9c1e0b7a-5b7e-4c61-9a8e-1d2f3a4b5c6d"

    struct NoLatestUST: Error {}

    /// MessagePack without its reading into the stored form: the path of a codec that has none.
    struct ValuesOnly: SyncCodec {
        let base = MessagePackCodec()
        var id: CodecID { base.id }
        var mediaTypes: [String] { base.mediaTypes }
        var limits: CodecLimits { base.limits }
        var features: CodecFeatures { base.features }
        func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] { try base.encode(value) }
        func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue { try base.decode(bytes) }
    }

    static func delta(_ gid: String, _ extra: [String: SyncValue]) -> SyncValue {
        var delta: [String: SyncValue] = [
            "gid": .string(gid), "deviceToken": .string(token), "localTimestamp": 1_700_000_000_123, "isDeleted": false,
            "ust": 8, "name": "Ada", "tags": ["x", 1, 2.5], "nested": ["b": nil, "a": [:]],
        ]
        delta.merge(extra) { _, new in new }
        return .dictionary(delta)
    }

    /// Each version the page holds, by key: its model, tombstone flag, version and fields blob.
    static func read(_ page: SyncValue, with codec: any SyncCodec) throws -> [RecordKey: (String, Bool, RecordVersion, [UInt8])] {
        let read = try PulledPage(try codec.encode(page), codec: codec, missingLatestUST: NoLatestUST())
        #expect(read.latestUST == 12 && read.hasMore)
        var versions: [RecordKey: (String, Bool, RecordVersion, [UInt8])] = [:]
        for version in try read.versions(with: codec) {
            versions[version.encoded.key] = (version.model, version.encoded.isDeleted, version.encoded.version, [UInt8](version.encoded.fields))
        }
        return versions
    }

    @Test("plain deltas and deltas whose columns need the rules (isDeleted 1, ust null) store the same from JSON and MessagePack as from values")
    func sameAsValues() throws {
        let page: SyncValue = [
            "latestUST": 12, "hasMore": true,
            "Contact": [Self.delta(Self.gid, [:]), Self.delta(Self.otherGid, ["isDeleted": 1, "ust": nil, "name": "Grace"])],
            "Note": [Self.delta(Self.gid, ["isDeleted": true, "text": "é\u{301} 😀"])],
        ]
        let fromJSON = try Self.read(page, with: JSONCodec())
        let fromMessagePack = try Self.read(page, with: MessagePackCodec())
        let fromValues = try Self.read(page, with: ValuesOnly())
        #expect(fromJSON.count == 3)
        for stored in [fromJSON, fromMessagePack] {
            #expect(Set(stored.keys) == Set(fromValues.keys))
            for (key, read) in stored {
                let values = try #require(fromValues[key])
                #expect(read.0 == values.0 && read.1 == values.1 && read.2 == values.2, "\(key)")
                #expect(read.3 == values.3, "\(key): the stored fields differ")
                let fields = try StoredValueFormat.decodeFields(Data(read.3))
                #expect(fields["ust"] == nil && fields["gid"] != nil, "\(key): ust is dropped, the columns kept")
            }
        }
        let grace = try #require(fromJSON[RecordKey(collection: "aquasync/Contact", id: RecordID(Self.otherGid))])
        #expect(grace.1, "isDeleted 1 is a deletion")
        #expect(try StoredValueFormat.decodeFields(Data(grace.3))["isDeleted"] == true)
    }

    /// Pages that break the rules, and what the refusal says.
    static let badPages: [(SyncValue, String)] = [
        (["latestUST": 12, "Contact": [Self.delta(Self.gid, ["ust": "soon"])]], "Contact[0].ust must be an integer"),
        (["latestUST": 12, "Contact": [Self.delta("NOT-A-UUID", [:])]], "Contact[0].gid must be a lowercase UUID"),
        (["latestUST": 12, "Contact": [Self.delta(Self.gid, ["localTimestamp": "soon"])]],
         "Contact[0].localTimestamp must be an integer"),
        (["latestUST": 12, "_Contact": [Self.delta(Self.gid, [:])]], "\"_Contact\" is not a model name"),
        (["latestUST": 12, "hasMore": "yes", "Contact": []], "hasMore must be a Boolean"),
        (["latestUST": 12, "Contact": [1]], "Contact[0] is not a dictionary"),
    ]

    @Test("a page that breaks the rules is refused with the words of reading it as values", arguments: badPages)
    func refusesAsValuesDo(_ page: SyncValue, _ message: String) throws {
        for codec in [JSONCodec(), MessagePackCodec(), ValuesOnly()] as [any SyncCodec] {
            let error = try #require(throws: AquasyncValidationError.self) {
                _ = try PulledPage(try codec.encode(page), codec: codec, missingLatestUST: NoLatestUST()).versions(with: codec)
            }
            #expect(error.description.contains(message), "\(codec.id): \(error.description)")
        }
    }

    @Test("a page without latestUST throws the error the caller gave")
    func missingLatestUST() throws {
        for codec in [JSONCodec(), MessagePackCodec()] as [any SyncCodec] {
            #expect(throws: NoLatestUST.self) {
                _ = try PulledPage(try codec.encode(["Contact": [Self.delta(Self.gid, [:])]]), codec: codec, missingLatestUST: NoLatestUST())
            }
        }
    }
}
