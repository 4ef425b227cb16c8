import Foundation
import SyncBinaryPlist
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncXMLPlist
import Testing

/// Dates no format means anything by (NaN, ±infinity) and dates outside what
/// a format carries, put by hand into the bytes of every reader's format at
/// every kind of position, then converted to every codec: each step either
/// works or throws a one-line ``CodecError``, and never traps.
@Suite("dates out of range in every reader and every conversion")
struct OutOfRangeDateTests {
    /// A date no test document otherwise holds, so its encoding can be found and replaced.
    static let sentinel = Date(timeIntervalSince1970: 981_173_106)  // 2001-02-03T04:05:06Z

    /// The sentinel at the top, first, in the middle and last in an array, as a
    /// dictionary value, and deep inside containers.
    static let documents: [SyncValue] = [
        .date(sentinel),
        [.date(sentinel), 1, "x"],
        [1, .date(sentinel), "x"],
        [1, "x", .date(sentinel)],
        ["a": .date(sentinel), "b": 1],
        ["deep": [["k": [.date(sentinel)]]], "z": "last"],
    ]

    /// Float64 bit patterns for binary plist dates: not a number, infinite, and finite but far away.
    static let binaryPlistDateBits: [(name: String, bits: UInt64, finite: Bool)] = [
        ("NaN", Double.nan.bitPattern, false),
        ("negative NaN", (-Double.nan).bitPattern, false),
        ("signaling NaN", 0x7FF0_0000_0000_0001, false),
        ("+infinity", Double.infinity.bitPattern, false),
        ("-infinity", (-Double.infinity).bitPattern, false),
        ("1e300 s", Double(1e300).bitPattern, true),
        ("-1e300 s", Double(-1e300).bitPattern, true),
        ("the largest Double", Double.greatestFiniteMagnitude.bitPattern, true),
        ("2^53 s", Double(1 << 53).bitPattern, true),
    ]

    /// Texts for an XML plist `<date>`, with whether the reader must refuse them.
    static let xmlDateTexts: [(text: String, refused: Bool)] = [
        ("10000-01-01T00:00:00Z", true), ("-0001-01-01T00:00:00Z", true), ("9999-12-31T23:59:60Z", true),
        ("nan", true), ("inf", true), ("+infinity", true), ("2001-02-30T00:00:00Z", true),
        ("99999999999999999999-01-01T00:00:00Z", true), ("2001-02-03T04:05:06.5Z", true), ("", true),
        ("0000-01-01T00:00:00Z", false), ("9999-12-31T23:59:59Z", false),
    ]

    /// MessagePack timestamp 96 fields (nanoseconds, seconds), the reader must refuse those beyond ±2^52 s.
    static let timestamps: [(nanoseconds: UInt32, seconds: Int64, refused: Bool)] = [
        (0, .max, true), (0, .min, true), (0, 1 << 52 + 1, true), (0, -(1 << 52) - 1, true),
        (999_999_999, 1 << 52, true), (1_000_000_000, 0, true), (.max, -1, true),
        (0, 1 << 52, false), (0, -(1 << 52), false), (999_999_999, 253_402_300_799, false),
    ]

    @Test("binary plist: a date that is not finite is refused when read; a far one converts or is refused")
    func binaryPlistDates() throws {
        let codec = BinaryPlistCodec()
        for document in Self.documents {
            let encoded = try codec.encode(document)
            var pattern: [UInt8] = [0x33]
            withUnsafeBytes(of: Self.sentinel.timeIntervalSinceReferenceDate.bitPattern.bigEndian) { pattern += $0 }
            let at = try #require(Self.firstIndex(of: pattern, in: encoded), "the sentinel date is in the encoding")
            for (name, bits, finite) in Self.binaryPlistDateBits {
                var bytes = encoded
                withUnsafeBytes(of: bits.bigEndian) { bytes.replaceSubrange(at + 1..<at + 9, with: $0) }
                let context = "\(name) in \(document)"
                if finite {
                    let value = try codec.decode(bytes)
                    try Self.convertToEveryCodec(value, context: context)
                } else {
                    let error = #expect(throws: CodecError.self, "\(context)") { try codec.decode(bytes) }
                    #expect(error?.code == .malformedInput, "\(context)")
                    #expect(error.map { "\($0)".contains("finite") } == true, "\(String(describing: error))")
                }
            }
        }
    }

    @Test("XML plist: dates outside the years 0000–9999 and malformed ones are refused when read")
    func xmlPlistDates() throws {
        let codec = XMLPlistCodec()
        for document in Self.documents {
            let text = String(decoding: try codec.encode(document), as: UTF8.self)
            let sentinel = "<date>2001-02-03T04:05:06Z</date>"
            #expect(text.contains(sentinel))
            for (dateText, refused) in Self.xmlDateTexts {
                let bytes = Array(text.replacingOccurrences(of: sentinel, with: "<date>\(dateText)</date>").utf8)
                let context = "<date>\(dateText)</date> in \(document)"
                if refused {
                    let error = #expect(throws: CodecError.self, "\(context)") { try codec.decode(bytes) }
                    #expect(error?.code == .malformedInput, "\(context)")
                } else {
                    try Self.convertToEveryCodec(try codec.decode(bytes), context: context)
                }
            }
        }
    }

    @Test("MessagePack: timestamps beyond ±2^52 s (limitExceeded) or with 10^9 nanoseconds or more (malformedInput) are refused when read")
    func messagePackTimestamps() throws {
        let codec = MessagePackCodec()
        // A date before 1970 always takes the 96-bit form: c7 0c ff, nanoseconds (4 bytes), seconds (8 bytes).
        let early = Date(timeIntervalSince1970: -1)
        for document in Self.documents {
            let encoded = try codec.encode(Self.replacingSentinel(in: document, with: early))
            let at = try #require(Self.firstIndex(of: [0xC7, 0x0C, 0xFF], in: encoded), "a timestamp 96 in \(document)")
            for (nanoseconds, seconds, refused) in Self.timestamps {
                var bytes = encoded
                var fields: [UInt8] = []
                withUnsafeBytes(of: nanoseconds.bigEndian) { fields += $0 }
                withUnsafeBytes(of: seconds.bigEndian) { fields += $0 }
                bytes.replaceSubrange(at + 3..<at + 15, with: fields)
                let context = "timestamp \(seconds) s + \(nanoseconds) ns in \(document)"
                if refused {
                    let error = #expect(throws: CodecError.self, "\(context)") { try codec.decode(bytes) }
                    #expect(error?.code == (nanoseconds >= 1_000_000_000 ? .malformedInput : .limitExceeded), "\(context)")
                } else {
                    try Self.convertToEveryCodec(try codec.decode(bytes), context: context)
                }
            }
        }
    }

    @Test("JSON: numbers out of range where a date would be convert or are refused, never trap")
    func jsonNumbers() throws {
        let codec = JSONCodec()
        for document in Self.documents {
            let text = String(decoding: try codec.encode(document), as: UTF8.self)
            let sentinel = "\"2001-02-03T04:05:06Z\""
            #expect(text.contains(sentinel))
            for number in ["1e400", "-1e400", "1e-400", "123456789012345678901234567890", "-9223372036854775809", "\"NaN\""] {
                let bytes = Array(text.replacingOccurrences(of: sentinel, with: number).utf8)
                guard let value = try? codec.decode(bytes) else { continue }
                try Self.convertToEveryCodec(value, context: "\(number) in \(document)")
            }
        }
    }

    @Test("every writer refuses a date that is not finite, in one line and without trapping")
    func writersRefuseNonFiniteDates() throws {
        for seconds in [Double.nan, .infinity, -.infinity, 1e300, -1e300] {
            let date = Date(timeIntervalSinceReferenceDate: seconds)
            for document in Self.documents {
                let value = Self.replacingSentinel(in: document, with: date)
                for (name, codec) in allCodecs {
                    if name == "binary-plist" && seconds.isFinite {
                        #expect(try codec.decode(codec.encode(value)) == value)
                        continue
                    }
                    let error = #expect(throws: CodecError.self, "\(name), \(seconds) s") { try codec.encode(value) }
                    #expect(error?.code == .unsupportedValue)
                    let message = error.map { "\($0)" } ?? ""
                    #expect(!message.contains("\n") && !message.contains("description unavailable"), "\(message)")
                }
            }
        }
        #expect(CodecError.describing(Date(timeIntervalSinceReferenceDate: .nan)).contains("not a number"))
        #expect(CodecError.describing(Date(timeIntervalSince1970: 1e300)).contains("1e+300"))
        #expect(CodecError.describing(Self.sentinel) == "the date 2001-02-03T04:05:06.000Z")
    }

    @Test("refusals are one line: a C library's message and keys with line breaks")
    func oneLineMessages() throws {
        let invalidUTF8 = Array("<plist><string>".utf8) + [0xBF] + Array("</string></plist>".utf8)
        let notUTF8 = #expect(throws: CodecError.self) { try XMLPlistCodec().decode(invalidUTF8) }
        #expect(notUTF8.map { !"\($0)".contains("\n") } == true, "\(String(describing: notUTF8))")

        let key = "line\nbreak"
        let duplicates: [(String, [UInt8])] = [
            ("xml-plist", Array("<plist><dict><key>\(key)</key><true/><key>\(key)</key><false/></dict></plist>".utf8)),
            ("json", Array("{\"line\\nbreak\": 1, \"line\\nbreak\": 2}".utf8)),
            ("msgpack", [0x82, 0xAA] + Array(key.utf8) + [0x01, 0xAA] + Array(key.utf8) + [0x02]),
        ]
        for (name, bytes) in duplicates {
            let codec = try #require(allCodecs.first { $0.name == name }?.codec)
            let error = #expect(throws: CodecError.self, "\(name)") { try codec.decode(bytes) }
            let message = error.map { "\($0)" } ?? ""
            #expect(!message.contains("\n") && message.contains(#""line\nbreak""#), "\(name): \(message)")
        }
        #expect(CodecError(.malformedInput, "first\n  second\r\nthird\n").message == "first second third")
    }

    /// Encodes `value` in every codec; each either refuses it with a one-line
    /// error or writes bytes that read back.
    static func convertToEveryCodec(_ value: SyncValue, context: String) throws {
        for (name, codec) in allCodecs {
            do {
                let bytes = try codec.encode(value)
                _ = try codec.decode(bytes)
            } catch {
                #expect(error.code == .unsupportedValue, "\(context) → \(name): \(error)")
                #expect(!"\(error)".contains("\n"), "\(context) → \(name): \(error)")
            }
        }
    }

    /// `document` with every sentinel date replaced by `date`.
    static func replacingSentinel(in document: SyncValue, with date: Date) -> SyncValue {
        switch document {
        case .date(let found) where found == sentinel: .date(date)
        case .array(let elements): .array(elements.map { replacingSentinel(in: $0, with: date) })
        case .dictionary(let entries): .dictionary(entries.mapValues { replacingSentinel(in: $0, with: date) })
        default: document
        }
    }

    /// Where `pattern` first occurs in `bytes`.
    static func firstIndex(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        return (0...bytes.count - pattern.count).first { bytes[$0..<$0 + pattern.count].elementsEqual(pattern) }
    }
}
