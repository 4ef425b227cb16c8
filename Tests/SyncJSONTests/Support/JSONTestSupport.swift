import SyncCore
import SyncJSON

/// Values and helpers shared by the JSON codec tests.
enum JSONTestSupport {
    /// A nested message with every kind JSON carries.
    static let nestedSample: SyncValue = [
        "header": ["version": "1.0", "sequence": 7, "final": true, "msisdn": nil],
        "body": [
            ["name": "sync-start", "params": ["uri": "com.apple.Contacts", "anchors": ["mode": "fast"]]],
            ["name": "sync-changes", "items": ["a1": ["op": "add", "record": ["name": "Ada \"Countess\" Lovelace", "ratio": 0.25]]]],
            [1, -2, 3.5, "é中😀\n", .unsignedInteger(18_446_744_073_709_551_615), []],
        ],
        "empty": [:],
    ]

    /// The bytes of a string literal, as UTF-8.
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// The encoding of `value` as text, for comparisons with expected JSON.
    static func encodedText(_ value: SyncValue, codec: JSONCodec = JSONCodec()) throws -> String {
        String(decoding: try codec.encode(value), as: UTF8.self)
    }

    /// The error decoding `bytes` throws, or `nil` when it decodes.
    static func decodingError(_ bytes: [UInt8], codec: JSONCodec = JSONCodec()) -> CodecError? {
        do {
            _ = try codec.decode(bytes)
            return nil
        } catch {
            return error
        }
    }
}
