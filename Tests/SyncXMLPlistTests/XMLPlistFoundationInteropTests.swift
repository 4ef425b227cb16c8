import Foundation
import SyncCore
import SyncTesting
import SyncXMLPlist
import Testing

@Suite("XML property list interop with Foundation's PropertyListSerialization")
struct XMLPlistFoundationInteropTests {
    let codec = XMLPlistCodec()

    /// Values written by us and read by Foundation (and the other way round).
    static let corpus: [SyncValue] = [
        XMLPlistTestSupport.nestedSample,
        "", "plain", "  spaced  ", "<tag> & \"quotes\" 'apostrophes' ]]>", "tab\tnew\nline", "é ß 中文 😀 𝄞 \u{10FFFF} \u{FEFF} \u{7F}",
        0, -1, 1, .integer(.max), .integer(.min), .unsignedInteger(UInt64(Int64.max) + 1), .unsignedInteger(.max),
        0.0, 1.0, -2.5, 0.1, 1e16, 1e-7, 1e300, .real(.pi), .real(.leastNonzeroMagnitude), .real(.greatestFiniteMagnitude),
        .real(.infinity), .real(-.infinity), .real(.nan),
        true, false,
        .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: 1_714_566_600)),
        .date(Date(timeIntervalSince1970: -2_208_988_800)), .date(Date(timeIntervalSince1970: 7_258_118_400)),
        .data([]), .data([0]), .data([0, 1]), .data([0, 1, 2]), .data(Array(0...255)),
        [], [:], [[[[]]]], ["": ""], ["b": 1, "a": 2, "é": 3, "e": 4, "😀": 5, "Z": 6],
    ]

    @Test("Foundation reads the fixed corpus we write as the same values, carriage returns included")
    func foundationReadsOurCorpus() throws {
        for value in Self.corpus + ["a\rb\r\n"] {
            let read = try FoundationPlist.read(try codec.encode(value))
            #expect(XMLPlistTestSupport.exactlyEqual(read, value), "Foundation read \(value) as \(read)")
        }
    }

    @Test("Foundation reads 10,000 random values we write as the same values", arguments: [UInt64(3), 4])
    func foundationReadsOurRandomValues(seed: UInt64) throws {
        var values = RandomValues(seed: seed, features: codec.features)
        for index in 0..<10_000 {
            // Foundation drops a byte order mark at the start of a string (see foundationQuirks).
            let value = XMLPlistTestSupport.xmlSafe(values.next(), replacingLeadingByteOrderMarks: true)
            let read = try FoundationPlist.read(try codec.encode(value))
            #expect(read == value, "value #\(index): Foundation read \(value) as \(read)")
        }
    }

    @Test("we read the fixed corpus Foundation writes as the same values")
    func weReadFoundationCorpus() throws {
        for value in Self.corpus {
            let bytes = try FoundationPlist.write(value)
            let read = try codec.decode(bytes)
            // Foundation writes -0.0 as 0.0 and carriage returns raw (see foundationQuirks); NaN by its own check.
            if let real = value.realValue, real.isNaN {
                #expect(read.realValue?.isNaN == true)
            } else {
                #expect(read == Self.asFoundationWritesIt(value), "we read Foundation's \(String(decoding: bytes, as: UTF8.self)) as \(read)")
            }
        }
    }

    @Test("we read 10,000 random values Foundation writes as the same values", arguments: [UInt64(6), 7])
    func weReadFoundationRandomValues(seed: UInt64) throws {
        var values = RandomValues(seed: seed, features: codec.features)
        for index in 0..<10_000 {
            // Foundation writes a carriage return raw, where XML turns it into a line feed.
            let value = XMLPlistTestSupport.xmlSafe(values.next(), replacingCarriageReturns: true)
            let bytes = try FoundationPlist.write(value)
            let read = try codec.decode(bytes)
            #expect(read == value, "value #\(index): we read \(String(decoding: bytes, as: UTF8.self)) as \(read)")
        }
    }

    @Test("where Foundation writes what XML cannot carry, we refuse or normalise as XML says")
    func foundationQuirks() throws {
        // A C0 control character: Foundation writes it raw, which XML 1.0 forbids.
        let control = try FoundationPlist.write("bell\u{7}")
        #expect(XMLPlistTestSupport.decodingError(control)?.code == .malformedInput)
        // A raw carriage return is a line end to every XML parser.
        #expect(try codec.decode(FoundationPlist.write("a\rb")) == "a\nb")
        // Foundation's reader drops a byte order mark that starts a string; Python's plistlib and we keep it.
        #expect(try FoundationPlist.read(codec.encode("\u{FEFF}x")) == "x")
        #expect(try codec.decode(codec.encode("\u{FEFF}x")) == "\u{FEFF}x")
        // -0.0 loses its sign in Foundation's writer.
        #expect(try codec.decode(FoundationPlist.write(.real(-0.0))).realValue?.sign == .plus)
    }

    /// `value` as it reads back from Foundation's writer: every `-0.0` is `0.0`,
    /// and every carriage return, written raw, is a line feed to an XML parser.
    static func asFoundationWritesIt(_ value: SyncValue) -> SyncValue {
        switch value {
        case .real(let real) where real == 0: return .real(0)
        case .string(let string):
            return .string(string.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n"))
        case .array(let elements): return .array(elements.map(asFoundationWritesIt))
        case .dictionary(let entries): return .dictionary(entries.mapValues(asFoundationWritesIt))
        default: return value
        }
    }
}
