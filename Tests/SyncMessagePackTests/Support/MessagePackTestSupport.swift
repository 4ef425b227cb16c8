import Foundation
import SyncCore
import TestSupport
import SyncMessagePack

/// Values and helpers shared by the MessagePack codec tests.
enum MessagePackTestSupport {
    /// A nested message with every kind MessagePack carries.
    static let nestedSample: SyncValue = [
        "header": ["version": "1.0", "sequence": 7, "final": true, "msisdn": nil],
        "body": [
            ["name": "sync-start", "params": ["uri": "com.apple.Contacts", "anchors": ["mode": "fast"]]],
            [
                "name": "sync-changes",
                "items": ["a1": ["op": "add", "record": ["name": "Ada \"Countess\" Lovelace", "ratio": 0.25]]],
            ],
            [1, -2, 3.5, "é中😀\n", .unsignedInteger(18_446_744_073_709_551_615), [], .integer(.min), 300, -40_000],
            [
                .date(Date(timeIntervalSince1970: 1_714_566_600)), .date(Date(timeIntervalSince1970: -1)),
                .date(Date(timeIntervalSince1970: 17_179_869_184.5)), .data([0, 1, 2, 255]), .data([]),
            ],
        ],
        "empty": [:],
        "long": .string(String(repeating: "x", count: 40)),
    ]

    /// The bytes a string of hex digits spells; spaces are ignored.
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        precondition(digits.count % 2 == 0, "odd number of hex digits in \(hex)")
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    /// The bytes as lowercase hex digits, for comparisons with expected encodings.
    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    /// The hex of the encoding of `value`.
    static func encodedHex(_ value: SyncValue, codec: MessagePackCodec = MessagePackCodec()) throws -> String {
        hex(try codec.encode(value))
    }

    /// The error decoding `bytes` throws, or `nil` when it decodes.
    static func decodingError(_ bytes: [UInt8], codec: MessagePackCodec = MessagePackCodec()) -> CodecError? {
        do {
            _ = try codec.decode(bytes)
            return nil
        } catch {
            return error
        }
    }

    /// The error encoding `value` throws, or `nil` when it encodes.
    static func encodingError(_ value: SyncValue, codec: MessagePackCodec = MessagePackCodec()) -> CodecError? {
        do {
            _ = try codec.encode(value)
            return nil
        } catch {
            return error
        }
    }
}
