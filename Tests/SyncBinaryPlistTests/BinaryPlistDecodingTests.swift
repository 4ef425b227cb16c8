import Foundation
import SyncBinaryPlist
import SyncCore
import Testing

@Suite("Binary plist decoding of what other writers produce")
struct BinaryPlistDecodingTests {
    let codec = BinaryPlistCodec()

    private func decode(_ objects: [[UInt8]], referenceSize: Int = 1, offsetSize: Int = 1) throws -> SyncValue {
        var file = CraftedPlist(objects: objects)
        file.referenceSize = referenceSize
        file.offsetSize = offsetSize
        return try codec.decode(file.bytes)
    }

    @Test("integers of 1, 2 and 4 bytes are unsigned, of 8 bytes signed")
    func integerWidths() throws {
        #expect(try decode([[0x10, 0xFF]]) == 255)
        #expect(try decode([[0x11, 0xFF, 0xFF]]) == 65_535)
        #expect(try decode([[0x12, 0xFF, 0xFF, 0xFF, 0xFF]]) == 4_294_967_295)
        #expect(try decode([[0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]) == -1)
        #expect(try decode([[0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]) == .integer(Int64.max))
    }

    @Test("16-byte integers become the canonical integer of their value")
    func sixteenByteIntegers() throws {
        let zeros: [UInt8] = Array(repeating: 0, count: 8)
        let ones: [UInt8] = Array(repeating: 0xFF, count: 8)
        #expect(try decode([[0x14] + zeros + CraftedPlist.bigEndian(5, size: 8)]) == 5)
        #expect(try decode([[0x14] + zeros + ones]) == .unsignedInteger(UInt64.max))
        #expect(try decode([[0x14] + zeros + [0x80] + Array(repeating: 0, count: 7)]) == .unsignedInteger(1 << 63))
        #expect(try decode([[0x14] + ones + ones]) == -1)
        #expect(try decode([[0x14] + ones + [0x80] + Array(repeating: 0, count: 7)]) == .integer(Int64.min))
    }

    @Test("4-byte reals are read as the same number")
    func floatReals() throws {
        #expect(try decode([[0x22] + CraftedPlist.bigEndian(UInt64(Float(1.5).bitPattern), size: 4)]) == 1.5)
        let third = Float(1) / 3
        #expect(try decode([[0x22] + CraftedPlist.bigEndian(UInt64(third.bitPattern), size: 4)]) == .real(Double(third)))
    }

    @Test("dates are Float64 seconds since 2001, exactly")
    func dates() throws {
        let value = try decode([[0x33] + CraftedPlist.bigEndian((-978_307_200.0).bitPattern, size: 8)])
        #expect(value == .date(Date(timeIntervalSince1970: 0)))
        let fraction = try decode([[0x33] + CraftedPlist.bigEndian(0.125.bitPattern, size: 8)])
        #expect(fraction.dateValue?.timeIntervalSinceReferenceDate == 0.125)
    }

    @Test("UIDs of 1 to 8 bytes read as Foundation shows them: [\"CF$UID\": n]")
    func uids() throws {
        #expect(try decode([[0x80, 0x07]]) == ["CF$UID": 7])
        #expect(try decode([[0x81, 0x01, 0x00]]) == ["CF$UID": 256])
        #expect(try decode([[0x83, 0, 1, 0, 0]]) == ["CF$UID": 65_536])
        #expect(try decode([[0x87] + Array(repeating: 0xFF, count: 8)]) == ["CF$UID": .unsignedInteger(UInt64.max)])
        #expect(try decode([[0xA1, 0x01], [0x80, 0x00]]) == [["CF$UID": 0]])
    }

    @Test("a UID takes a level of nesting, as the dictionary it becomes")
    func uidDepth() throws {
        let file = CraftedPlist(objects: [[0xA1, 0x01], [0x80, 0x00]]).bytes
        #expect(try BinaryPlistCodec(limits: CodecLimits(maxDepth: 2)).decode(file) == [["CF$UID": 0]])
        #expect {
            try BinaryPlistCodec(limits: CodecLimits(maxDepth: 1)).decode(file)
        } throws: { ($0 as? CodecError)?.code == .limitExceeded }
    }

    @Test("counts written in more bytes than needed are read")
    func nonMinimalCounts() throws {
        #expect(try decode([[0x5F, 0x10, 0x02, 0x68, 0x69]]) == "hi")
        #expect(try decode([[0x4F, 0x13, 0, 0, 0, 0, 0, 0, 0, 1, 0xAB]]) == .data([0xAB]))
        #expect(try decode([[0xAF, 0x11, 0x00, 0x01, 0x01], [0x09]]) == [true])
    }

    @Test("references and offsets wider than needed are read")
    func wideReferences() throws {
        let value = try decode([[0xA2, 0, 0, 0, 1, 0, 0, 0, 2], [0x09], [0x51, 0x61]], referenceSize: 4, offsetSize: 8)
        #expect(value == [true, "a"])
    }

    @Test("UTF-16 strings, surrogate pairs and ASCII-range text included")
    func utf16Strings() throws {
        #expect(try decode([[0x62, 0x00, 0x61, 0x00, 0x62]]) == "ab")
        #expect(try decode([[0x63, 0x00, 0xE9, 0xD8, 0x3D, 0xDE, 0x00]]) == "é😀")
        #expect(try decode([[0x60]]) == "")
        #expect(try decode([[0x61, 0x00, 0x00]]) == "\u{0}")
    }

    @Test("a shared object (not a cycle) is read at each reference")
    func sharedObjects() throws {
        #expect(try decode([[0xA2, 0x01, 0x01], [0xA1, 0x02], [0x51, 0x78]]) == [["x"], ["x"]])
        #expect(try decode([[0xD1, 0x01, 0x02], [0x51, 0x6B], [0xA1, 0x01]]) == ["k": ["k"]])
    }

    @Test("a scalar may be the top object, and the top object need not be the first")
    func topObject() throws {
        var file = CraftedPlist(objects: [[0x51, 0x61], [0xA1, 0x00]])
        file.topObject = 1
        #expect(try codec.decode(file.bytes) == ["a"])
        #expect(try decode([[0x08]]) == false)
    }

    @Test("objects not reachable from the top are ignored")
    func unreachableObjects() throws {
        #expect(try decode([[0x09], [0x00], [0xC0], [0xA1, 0x07]]) == true)
    }
}
