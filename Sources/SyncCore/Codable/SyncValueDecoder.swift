/// Decodes `Decodable` values from ``SyncValue``, the other half of
/// ``SyncValueEncoder``.
///
/// ```swift
/// struct SyncStart: Codable {
///     var uri: String
///     var anchors: Anchors?
/// }
///
/// let value = try codec.decode(bytes)
/// let start = try SyncValueDecoder().decode(SyncStart.self, from: value)
/// ```
///
/// ## Leniency
/// The decoder accepts what a codec makes of a type it cannot carry, and
/// nothing more:
/// - a `Date` field takes a ``SyncValue/date(_:)`` or an ISO 8601 string
///   (`2024-05-01T12:00:00Z`, with optional fraction and offset), as JSON carries dates;
/// - a `Data` field takes a ``SyncValue/data(_:)`` or a base64 string, as JSON carries data;
/// - a `[UInt8]` field takes an array of integers or a ``SyncValue/data(_:)``;
/// - a `Double` or `Float` field takes an integer;
/// - a `Decimal` field takes its string or a number;
/// - a `UUID` field takes its string in either case.
///
/// It stays strict otherwise: an integer string such as `"42"` is not an
/// `Int`, and `0`/`1` are not Booleans. Unknown keys are ignored, and a missing
/// key or ``SyncValue/null`` decodes as `nil` for an optional property.
///
/// Errors are `DecodingError`s whose context carries the coding path of the
/// offending value, such as `items[2].date`.
public struct SyncValueDecoder: Sendable {
    /// Values handed to every `init(from:)` as `decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Makes a decoder.
    /// - Parameter userInfo: Values handed to every `init(from:)`.
    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.userInfo = userInfo
    }

    /// Decodes a value of `type` from `value`.
    ///
    /// - Throws: `DecodingError` with the coding path of the value that does
    ///   not fit, or whatever the type's own `init(from:)` throws.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self, from value: SyncValue) throws -> Value {
        let decoder = SyncValueDecoding(value: value, codingPath: [], userInfo: userInfo)
        return try decoder.decodeNested(type, from: value, at: [])
    }
}
