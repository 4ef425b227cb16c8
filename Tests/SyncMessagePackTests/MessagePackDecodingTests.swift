import Foundation
import SyncCore
import SyncMessagePack
import Testing

@Suite("MessagePack decoding: every form of every type")
struct MessagePackDecodingTests {
    let codec = MessagePackCodec()

    func decode(_ hex: String) throws -> SyncValue {
        try codec.decode(MessagePackTestSupport.bytes(hex))
    }

    @Test(
        "integers of every width decode to the canonical integer",
        arguments: [
            ("00", SyncValue.integer(0)), ("7f", 127), ("ff", -1), ("e0", -32),
            ("cc00", 0), ("ccff", 255), ("cd0000", 0), ("cdffff", 65_535), ("ce00000001", 1),
            ("ceffffffff", 4_294_967_295), ("cf0000000000000005", 5), ("cf7fffffffffffffff", .integer(.max)),
            ("cf8000000000000000", .unsignedInteger(9_223_372_036_854_775_808)),
            ("cfffffffffffffffff", .unsignedInteger(.max)),
            ("d07f", 127), ("d080", -128), ("d17fff", 32_767), ("d18000", -32_768),
            ("d27fffffff", 2_147_483_647), ("d280000000", -2_147_483_648),
            ("d3ffffffffffffffff", -1), ("d38000000000000000", .integer(.min)), ("d37fffffffffffffff", .integer(.max)),
        ])
    func integers(hex: String, expected: SyncValue) throws {
        #expect(try decode(hex) == expected)
    }

    @Test("nil, Booleans, float32 and float64")
    func scalars() throws {
        #expect(try decode("c0") == .null)
        #expect(try decode("c3") == true)
        #expect(try decode("c2") == false)
        #expect(try decode("ca3fc00000") == 1.5)
        #expect(try decode("ca3dcccccd") == .real(Double(Float(0.1))))
        #expect(try decode("ca7f800000") == .real(.infinity))
        #expect(try decode("caff800000") == .real(-.infinity))
        #expect(try decode("ca80000000") == .real(-0.0))
        #expect(try decode("cb3fb999999999999a") == 0.1)
        #expect(try decode("cb0000000000000001") == .real(.leastNonzeroMagnitude))
        guard case .real(let nan32) = try decode("ca7fc00000"), case .real(let nan64) = try decode("cb7ff8000000000000")
        else {
            Issue.record("NaN did not decode as a real")
            return
        }
        #expect(nan32.isNaN && nan64.isNaN)
    }

    @Test("str and bin in every length form, including longer forms than needed")
    func stringsAndData() throws {
        #expect(try decode("a0") == "")
        #expect(try decode("a3616263") == "abc")
        #expect(try decode("d903616263") == "abc")
        #expect(try decode("da0003616263") == "abc")
        #expect(try decode("db00000003616263") == "abc")
        #expect(try decode("a4f09f9880") == "😀")
        #expect(try decode("a3e4b8ad") == "中")
        #expect(try decode("a100") == "\u{0}")
        #expect(try decode("c400") == .data([]))
        #expect(try decode("c403000102") == .data([0, 1, 2]))
        #expect(try decode("c50003000102") == .data([0, 1, 2]))
        #expect(try decode("c600000003000102") == .data([0, 1, 2]))
        let long = Array(repeating: UInt8(ascii: "z"), count: 70_000)
        #expect(try codec.decode([0xdb, 0x00, 0x01, 0x11, 0x70] + long) == .string(String(repeating: "z", count: 70_000)))
        #expect(try codec.decode([0xc6, 0x00, 0x01, 0x11, 0x70] + long) == .data(long))
    }

    @Test("arrays and maps in every length form")
    func containers() throws {
        #expect(try decode("90") == [])
        #expect(try decode("930102c0") == [1, 2, nil])
        #expect(try decode("dc000101") == [1])
        #expect(try decode("dd0000000101") == [1])
        #expect(try decode("80") == [:])
        #expect(try decode("81a16101") == ["a": 1])
        #expect(try decode("de0001a16101") == ["a": 1])
        #expect(try decode("df00000001a16101") == ["a": 1])
        #expect(try decode("82a162a0a161c0") == ["a": nil, "b": ""])
        #expect(try decode("93 90 9190 80") == [[], [[]], [:]])
    }

    @Test("timestamps in the 32-, 64- and 96-bit forms, fixed and ext 8 sizes")
    func timestamps() throws {
        #expect(try decode("d6ff00000000") == .date(Date(timeIntervalSince1970: 0)))
        #expect(try decode("d6ff663235c8") == .date(Date(timeIntervalSince1970: 1_714_566_600)))
        #expect(try decode("d6ffffffffff") == .date(Date(timeIntervalSince1970: 4_294_967_295)))
        #expect(try decode("d7ff7735940000000000") == .date(Date(timeIntervalSince1970: 0.5)))
        #expect(try decode("d7ff0000000100000000") == .date(Date(timeIntervalSince1970: 4_294_967_296)))
        #expect(try decode("d7ff00000003ffffffff") == .date(Date(timeIntervalSince1970: 17_179_869_183)))
        #expect(try decode("c70cff000000000000000400000000") == .date(Date(timeIntervalSince1970: 17_179_869_184)))
        #expect(try decode("c70cff00000000ffffffffffffffff") == .date(Date(timeIntervalSince1970: -1)))
        #expect(try decode("c70cff1dcd6500ffffffffffffffff") == .date(Date(timeIntervalSince1970: -0.5)))
        // 1900-01-01 and 9999-12-31T23:59:59Z, in the 96-bit form a 64-bit seconds field needs.
        #expect(try decode("c70cff00000000ffffffff7c558180") == .date(Date(timeIntervalSince1970: -2_208_988_800)))
        #expect(try decode("c70cff000000000000003afff4417f") == .date(Date(timeIntervalSince1970: 253_402_300_799)))
        // The 32- and 64-bit payloads in the ext 8 container are read as well.
        #expect(try decode("c704ff00000001") == .date(Date(timeIntervalSince1970: 1)))
        #expect(try decode("c708ff7735940000000000") == .date(Date(timeIntervalSince1970: 0.5)))
    }

    @Test("a timestamp with nanoseconds reads as the nearest Date")
    func nanosecondPrecision() throws {
        // 2024-05-01T12:30:00.000000001Z: a Date this far from 2001 has about 0.1 µs of precision.
        let value = try decode("c70cff0000000100000000663235c8")
        let expected = Date(timeIntervalSinceReferenceDate: 1_714_566_600 - 978_307_200 + 1e-9)
        #expect(value == .date(expected))
        // Near 2001 a Date holds the nanosecond exactly enough to be written back the same way.
        let bytes = MessagePackTestSupport.bytes("d7ff00000004 3a4fc880")
        let near2001 = try codec.decode(bytes)
        #expect(try codec.encode(near2001) == bytes)
    }
}
