import Foundation
import SyncCore
import SyncXMLPlist

/// Values and helpers shared by the XML property list codec tests.
enum XMLPlistTestSupport {
    /// A nested message with every kind an XML property list carries.
    static let nestedSample: SyncValue = [
        "header": ["version": "1.0", "sequence": 7, "final": true, "retry": false],
        "body": [
            ["name": "sync-start", "params": ["uri": "com.apple.Contacts", "anchors": ["mode": "fast"]]],
            [
                "name": "sync-changes",
                "items": ["a1": ["op": "add", "record": ["name": "Ada \"Countess\" <Lovelace> & co", "ratio": 0.25]]],
            ],
            [1, -2, 3.5, "é中😀\n\t\r", .unsignedInteger(18_446_744_073_709_551_615), [], .integer(.min), [:]],
            [
                .date(Date(timeIntervalSince1970: 1_714_566_600)), .date(Date(timeIntervalSince1970: -1)),
                .data([0, 1, 2, 255]), .data([]), .data(Array(0...255)),
            ],
            [.real(.infinity), .real(-.infinity), .real(-0.0), .real(.greatestFiniteMagnitude), .real(.leastNonzeroMagnitude)],
        ],
        "": "",
        "long": .string(String(repeating: "x", count: 400)),
    ]

    /// Whether XML 1.0 can carry a scalar in character data (its `Char` production).
    static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// Whether `value` holds a string or key with a character XML 1.0 cannot carry.
    static func holdsNonXMLCharacter(_ value: SyncValue) -> Bool {
        switch value {
        case .string(let string): string.unicodeScalars.contains { !isXMLCharacter($0) }
        case .array(let elements): elements.contains(where: holdsNonXMLCharacter)
        case .dictionary(let entries):
            entries.contains { key, value in
                key.unicodeScalars.contains { !isXMLCharacter($0) } || holdsNonXMLCharacter(value)
            }
        default: false
        }
    }

    /// `value` with every character XML 1.0 cannot carry replaced by `?` (and,
    /// when `replacingCarriageReturns`, every CR by `?` too, for writers that
    /// put it raw in the text where XML's line-end normalisation turns it into LF).
    static func xmlSafe(
        _ value: SyncValue, replacingCarriageReturns: Bool = false, replacingLeadingByteOrderMarks: Bool = false
    ) -> SyncValue {
        func clean(_ string: String) -> String {
            var scalars = String.UnicodeScalarView()
            for scalar in string.unicodeScalars {
                let keep = isXMLCharacter(scalar) && !(replacingCarriageReturns && scalar == "\r")
                    && !(replacingLeadingByteOrderMarks && scalars.isEmpty && scalar == "\u{FEFF}")
                scalars.append(keep ? scalar : "?")
            }
            return String(scalars)
        }
        switch value {
        case .string(let string): return .string(clean(string))
        case .array(let elements):
            return .array(elements.map {
                xmlSafe(
                    $0, replacingCarriageReturns: replacingCarriageReturns,
                    replacingLeadingByteOrderMarks: replacingLeadingByteOrderMarks)
            })
        case .dictionary(let entries):
            var cleaned: [String: SyncValue] = [:]
            for (key, entry) in entries {
                cleaned[clean(key)] = xmlSafe(
                    entry, replacingCarriageReturns: replacingCarriageReturns,
                    replacingLeadingByteOrderMarks: replacingLeadingByteOrderMarks)
            }
            return .dictionary(cleaned)
        default: return value
        }
    }

    /// Whether two values are equal with reals compared bit for bit (`-0.0` differs from `0.0`, NaN equals NaN).
    static func exactlyEqual(_ lhs: SyncValue, _ rhs: SyncValue) -> Bool {
        switch (lhs, rhs) {
        case (.real(let left), .real(let right)):
            return left.bitPattern == right.bitPattern || (left.isNaN && right.isNaN)
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { exactlyEqual($0, $1) }
        case (.dictionary(let left), .dictionary(let right)):
            return left.count == right.count
                && left.allSatisfy { key, value in right[key].map { exactlyEqual(value, $0) } ?? false }
        default: return lhs == rhs
        }
    }

    /// The UTF-8 bytes of `text`.
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// `body` inside the XML declaration and the `<plist>` element.
    static func document(_ body: String) -> [UInt8] {
        bytes("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n\(body)\n</plist>\n")
    }

    /// The encoding of `value` as text.
    static func encodedText(_ value: SyncValue, codec: XMLPlistCodec = XMLPlistCodec()) throws -> String {
        String(decoding: try codec.encode(value), as: UTF8.self)
    }

    /// The error decoding `bytes` throws, or `nil` when it decodes.
    static func decodingError(_ bytes: [UInt8], codec: XMLPlistCodec = XMLPlistCodec()) -> CodecError? {
        do {
            _ = try codec.decode(bytes)
            return nil
        } catch {
            return error
        }
    }

    /// The error encoding `value` throws, or `nil` when it encodes.
    static func encodingError(_ value: SyncValue, codec: XMLPlistCodec = XMLPlistCodec()) -> CodecError? {
        do {
            _ = try codec.encode(value)
            return nil
        } catch {
            return error
        }
    }
}
