import Foundation
import SyncBinaryPlist
import SyncCore
import Testing

@Suite("Binary plist encoding: layout, sizes and uniquing")
struct BinaryPlistEncodingTests {
    let codec = BinaryPlistCodec()

    /// The trailer of a file: offset size, reference size, object count, top object, offset table start.
    private func trailer(_ bytes: [UInt8]) -> (offsetSize: Int, referenceSize: Int, objects: Int, top: Int, table: Int) {
        let start = bytes.count - 32
        func number(_ at: Int) -> Int { bytes[at..<at + 8].reduce(0) { $0 << 8 | Int($1) } }
        return (Int(bytes[start + 6]), Int(bytes[start + 7]), number(start + 8), number(start + 16), number(start + 24))
    }

    /// Scalars and the hex of the file Python's `plistlib.dumps(value, fmt=FMT_BINARY)` writes for each.
    static let plistlibFiles: [(SyncValue, String)] = [
        (.integer(1), "62706c6973743030100108000000000000010100000000000000010000000000000000000000000000000a"),
        (.string("a"), "62706c6973743030516108000000000000010100000000000000010000000000000000000000000000000a"),
        (.unsignedInteger(UInt64.max),
         "62706c6973743030140000000000000000ffffffffffffffff080000000000000101000000000000000100000000000000000000000000000019"),
        (.integer(-1), "62706c697374303013ffffffffffffffff080000000000000101000000000000000100000000000000000000000000000011"),
    ]

    @Test("scalars give the same bytes as Python's plistlib", arguments: plistlibFiles)
    func scalarBytes(value: SyncValue, hex: String) throws {
        #expect(PlistCanonicalForm.hex(try codec.encode(value)) == hex)
    }

    @Test("a container comes after its scalars, with one-byte references")
    func containerLayout() throws {
        let bytes = try codec.encode([1, "a"])
        let expected: [UInt8] = Array("bplist00".utf8) + [0x10, 0x01, 0x51, 0x61, 0xA2, 0x01, 0x02, 0x0C, 0x08, 0x0A]
            + [0, 0, 0, 0, 0, 0, 1, 1] + CraftedPlist.bigEndian(3, size: 8) + CraftedPlist.bigEndian(0, size: 8)
            + CraftedPlist.bigEndian(15, size: 8)
        #expect(bytes == expected)
    }

    /// Integers and the object each should be written as.
    static let integerObjects: [(SyncValue, [UInt8])] = [
        (.integer(0), [0x10, 0x00]), (.integer(255), [0x10, 0xFF]), (.integer(256), [0x11, 0x01, 0x00]),
        (.integer(65_535), [0x11, 0xFF, 0xFF]), (.integer(65_536), [0x12, 0x00, 0x01, 0x00, 0x00]),
        (.integer(4_294_967_295), [0x12, 0xFF, 0xFF, 0xFF, 0xFF]), (.integer(4_294_967_296), [0x13, 0, 0, 0, 1, 0, 0, 0, 0]),
        (.integer(-2), [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE]),
        (.unsignedInteger(1 << 63), [0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0]),
    ]

    @Test("integers use the fewest bytes Apple's format allows", arguments: integerObjects)
    func integerWidths(value: SyncValue, object: [UInt8]) throws {
        let bytes = try codec.encode(value)
        #expect(Array(bytes[8..<8 + object.count]) == object)
        #expect(bytes.count == 8 + object.count + 1 + 32)
    }

    @Test("an unsigned value that fits Int64 is written as a plain integer")
    func smallUnsigned() throws {
        #expect(try codec.encode(.unsignedInteger(5)) == codec.encode(5))
    }

    @Test("reals are 8 bytes; dates are Float64 seconds since 2001")
    func realsAndDates() throws {
        #expect(Array(try codec.encode(1.5)[8..<17]) == [0x23, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0])
        let date = try codec.encode(.date(Date(timeIntervalSinceReferenceDate: 1.5)))
        #expect(Array(date[8..<17]) == [0x33, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0])
        let epoch = try codec.encode(.date(Date(timeIntervalSince1970: 0)))
        #expect(Array(epoch[8..<17]) == [0x33] + CraftedPlist.bigEndian((-978_307_200.0).bitPattern, size: 8))
    }

    @Test("strings are ASCII when they can be, else UTF-16BE with a count in code units")
    func strings() throws {
        #expect(Array(try codec.encode("abc")[8..<12]) == [0x53, 0x61, 0x62, 0x63])
        #expect(Array(try codec.encode("é😀")[8..<15]) == [0x63, 0x00, 0xE9, 0xD8, 0x3D, 0xDE, 0x00])
        #expect(Array(try codec.encode("\u{7F}")[8..<10]) == [0x51, 0x7F])
    }

    @Test("counts of 15 and more follow the marker as an integer object")
    func extendedCounts() throws {
        #expect(Array(try codec.encode(.data(Array(repeating: 7, count: 14)))[8..<10]) == [0x4E, 7])
        #expect(Array(try codec.encode(.data(Array(repeating: 7, count: 15)))[8..<12]) == [0x4F, 0x10, 0x0F, 7])
        #expect(Array(try codec.encode(.data(Array(repeating: 7, count: 256)))[8..<13]) == [0x4F, 0x11, 0x01, 0x00, 7])
        let string = try codec.encode(.string(String(repeating: "s", count: 70_000)))
        #expect(Array(string[8..<14]) == [0x5F, 0x12, 0x00, 0x01, 0x11, 0x70])
    }

    @Test("equal strings, numbers, dates and data are written once; containers never are")
    func uniquing() throws {
        let date = SyncValue.date(Date(timeIntervalSinceReferenceDate: 5))
        let value: SyncValue = [
            "x", "x", 7, 7, 2.5, 2.5, date, date, .data([1]), .data([1]), true, true, [], [], ["x": "x"], ["x": 7],
        ]
        let bytes = try codec.encode(value)
        // top array, x, 7, 2.5, date, data, true, two empty arrays, two dictionaries
        #expect(trailer(bytes).objects == 11)
        #expect(try codec.decode(bytes) == value)
        // An integer and a real of the same value are different objects, and so are 1 and true.
        #expect(trailer(try codec.encode([1, 1.0, true])).objects == 4)
    }

    @Test("references use the fewest bytes that name every object; offsets the fewest that hold the table start")
    func minimalSizes() throws {
        let small = trailer(try codec.encode(.array((0..<254).map { .integer(Int64($0)) })))
        #expect(small.objects == 255)
        #expect(small.referenceSize == 1)
        #expect(small.offsetSize == 2)
        let wide = trailer(try codec.encode(.array((0..<255).map { .integer(Int64($0)) })))
        #expect(wide.objects == 256)
        #expect(wide.referenceSize == 1)
        let wider = trailer(try codec.encode(.array((0..<256).map { .integer(Int64($0)) })))
        #expect(wider.referenceSize == 2)
        // 300 copies of one string are one object, so the references stay one byte wide.
        let repeated = trailer(try codec.encode(.array(Array(repeating: "same", count: 300))))
        #expect(repeated.objects == 2)
        #expect(repeated.referenceSize == 1)
        #expect(repeated.offsetSize == 2)
        #expect(trailer(try codec.encode("tiny")).offsetSize == 1)
    }

    @Test("dictionary keys are written in UTF-8 byte order, keys before values")
    func keyOrder() throws {
        let bytes = try codec.encode(["b": 1, "a": 2, "é": 3, "Z": 4])
        let area = Array(bytes[8..<trailer(bytes).table])
        // key objects in sorted order (Z, a, b, é) are the first four written
        let expectedKeys: [UInt8] = [0x51, 0x5A, 0x51, 0x61, 0x51, 0x62, 0x61, 0x00, 0xE9]
        #expect(Array(area.prefix(expectedKeys.count)) == expectedKeys)
    }

    @Test("the top object is the first one and the trailer describes the file exactly")
    func trailerFields() throws {
        let bytes = try codec.encode(BinaryPlistCorpus.nestedSample)
        let fields = trailer(bytes)
        #expect(fields.top == 0)
        #expect(fields.table + fields.objects * fields.offsetSize == bytes.count - 32)
        #expect(Array(bytes[bytes.count - 32..<bytes.count - 26]) == [0, 0, 0, 0, 0, 0])
    }
}
