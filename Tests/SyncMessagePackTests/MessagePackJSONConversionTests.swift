import Foundation
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncTesting
import Testing

@Suite("JSON-shaped values convert MessagePack ⇄ JSON")
struct MessagePackJSONConversionTests {
    let messagePack = MessagePackCodec()
    let json = JSONCodec()

    @Test("MessagePack bytes become the expected JSON text")
    func messagePackToJSON() throws {
        let bytes = MessagePackTestSupport.bytes("83 a161 95 01 cb4004000000000000 c0 c3 a178 a162 80 a163 cfffffffffffffffff")
        let text = String(decoding: try json.encode(try messagePack.decode(bytes)), as: UTF8.self)
        #expect(text == #"{"a":[1,2.5,null,true,"x"],"b":{},"c":18446744073709551615}"#)
    }

    @Test("a JSON text becomes the expected MessagePack bytes")
    func jsonToMessagePack() throws {
        let value = try json.decode(Array(#"{"c":-1,"a":[1.0,"é"],"b":null}"#.utf8))
        #expect(try MessagePackTestSupport.encodedHex(value) == "83a16192cb3ff0000000000000a2c3a9a162c0a163ff")
    }

    @Test("random JSON-shaped values survive JSON → MessagePack → JSON and back", arguments: [UInt64(4), 99])
    func randomValues(seed: UInt64) throws {
        var values = RandomValues(seed: seed, features: json.features)
        for _ in 0..<5_000 {
            let value = values.next()
            let jsonText = try json.encode(value)
            let throughMessagePack = try messagePack.decode(try messagePack.encode(try json.decode(jsonText)))
            #expect(try json.encode(throughMessagePack) == jsonText)
            let messagePackBytes = try messagePack.encode(value)
            let throughJSON = try json.decode(try json.encode(try messagePack.decode(messagePackBytes)))
            #expect(try messagePack.encode(throughJSON) == messagePackBytes)
            #expect(throughJSON == value)
        }
    }

    @Test("dates and data reach JSON as strings, by the JSON codec's rules")
    func datesAndData() throws {
        let bytes = try messagePack.encode(["when": .date(Date(timeIntervalSince1970: 1_714_566_600)), "blob": .data([0, 1, 2, 255])])
        let text = String(decoding: try json.encode(try messagePack.decode(bytes)), as: UTF8.self)
        #expect(text == #"{"blob":"AAEC/w==","when":"2024-05-01T12:30:00Z"}"#)
    }
}
