import Foundation
import SyncCore
import SyncMessagePack
import SyncSamples
import SyncTesting
import Testing

@Suite("MessagePack documents: every part read in place, as decode reads it")
struct MessagePackDocumentTests {
    let codec = MessagePackCodec()

    @Test("every node of 2,000 random values reads as the value it stands for", arguments: [UInt64(3), 77])
    func randomValues(seed: UInt64) throws {
        var values = RandomValues(seed: seed, features: codec.features)
        for _ in 0..<2_000 {
            let value = values.next()
            let document = try codec.decodeDocument(codec.encode(value))
            expectNode(document.root, reads: value)
            #expect(document.root.value == value)
        }
    }

    @Test("the standard contacts read by key and by position")
    func contacts() throws {
        let records = SampleContacts.standardRecords()
        let document = try codec.decodeDocument(codec.encode(records))
        guard case .array(let contacts) = records else {
            Issue.record("the standard records are not an array")
            return
        }
        #expect(document.root.count == contacts.count)
        let last = try #require(document.root[contacts.count - 1])
        #expect(last["uuid"]?.stringValue == contacts.last?["uuid"]?.stringValue)
        #expect(last["address"]?["city"]?.stringValue == contacts.last?["address"]?["city"]?.stringValue)
        #expect(last["birthday"]?.dateValue == contacts.last?["birthday"]?.dateValue)
        #expect(last["no such key"] == nil)
        #expect(document.root[contacts.count] == nil)
        #expect(document.root[-1] == nil)
        #expect(document.root.value == records)
    }

    @Test("data is a slice of the input, not a copy")
    func dataInPlace() throws {
        let photo = [UInt8](repeating: 0xAB, count: 10_000)
        let bytes = try codec.encode(["photo": .data(photo), "name": "Ada"])
        let document = try codec.decodeDocument(bytes)
        let slice = try #require(document.root["photo"]?.bytes)
        #expect(Array(slice) == photo)
        // The slice's indices are the places of the photo's bytes in the encoded input.
        #expect(Array(bytes[slice.indices]) == photo)
        #expect(document.root["name"]?.bytes == nil)
        #expect(document.root["name"]?.dataValue == nil)
    }

    @Test("accessors of the wrong kind give nil, and scalars have no contents")
    func wrongKinds() throws {
        let document = try codec.decodeDocument(codec.encode(["n": 7, "s": "x", "list": [1, 2]]))
        let number = try #require(document.root["n"])
        #expect(number.stringValue == nil)
        #expect(number.integerValue == 7)
        #expect(number.unsignedIntegerValue == 7)
        #expect(number.realValue == 7)
        #expect(number.count == 0)
        #expect(number.elements == nil)
        #expect(number.entries == nil)
        #expect(number["n"] == nil)
        #expect(number[0] == nil)
        #expect(document.root["s"]?.integerValue == nil)
        #expect(document.root["list"]?["n"] == nil)
        #expect(document.root["list"]?[1]?.integerValue == 2)
    }

    @Test("keys out of order and non-ASCII keys are read, and their duplicates refused")
    func keyOrder() throws {
        // {"b": 1, "a": 2, "é": 3}: out of byte order, then a two-byte key.
        let document = try codec.decodeDocument(MessagePackTestSupport.bytes("83a16201a16102a2c3a903"))
        #expect(document.root.entries?.map(\.key) == ["b", "a", "é"])
        #expect(document.root["é"]?.integerValue == 3)
        #expect(document.root.value == ["a": 2, "b": 1, "é": 3])
        // {"b": 1, "a": 2, "b": 3}: the repeat comes after the order broke.
        #expect(throws: CodecError.self) { try codec.decodeDocument(MessagePackTestSupport.bytes("83a16201a16102a16203")) }
    }

    /// Checks every accessor of `node`, and of everything inside it, against `value`.
    private func expectNode(_ node: SyncDocument.Node, reads value: SyncValue) {
        #expect(node.kind == value.kind)
        switch value {
        case .null: #expect(node.isNull)
        case .bool(let flag): #expect(node.boolValue == flag)
        case .integer(let integer): #expect(node.integerValue == integer)
        case .unsignedInteger(let integer): #expect(node.unsignedIntegerValue == integer)
        case .real(let real): #expect(node.realValue?.bitPattern == real.bitPattern)
        case .string(let string): #expect(node.stringValue == string)
        case .date(let date): #expect(node.dateValue == date)
        case .data(let bytes): #expect(node.dataValue == bytes)
        case .array(let elements):
            #expect(node.count == elements.count)
            for (element, expected) in zip(node.elements ?? [], elements) { expectNode(element, reads: expected) }
            #expect(node.elements?.count == elements.count)
        case .dictionary(let entries):
            #expect(node.count == entries.count)
            #expect(Set(node.entries?.map(\.key) ?? []) == Set(entries.keys))
            for (key, expected) in entries {
                guard let child = node[key] else {
                    Issue.record("no entry \(key)")
                    continue
                }
                expectNode(child, reads: expected)
            }
        }
    }
}
