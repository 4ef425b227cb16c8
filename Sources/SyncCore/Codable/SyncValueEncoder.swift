/// Encodes `Encodable` values to ``SyncValue``, so a stack defines typed
/// messages and converts them at its edge.
///
/// ```swift
/// struct SyncStart: Codable {
///     var uri: String
///     var anchors: Anchors?
/// }
///
/// let value = try SyncValueEncoder().encode(SyncStart(uri: "com.apple.Contacts", anchors: nil))
/// // ["uri": "com.apple.Contacts"] — a nil optional leaves its key out
/// let bytes = try codec.encode(value)
/// ```
///
/// ## How types map
/// | Swift | ``SyncValue`` |
/// |---|---|
/// | `String`, `URL` (absolute string), `Decimal` (its description) | ``SyncValue/string(_:)`` |
/// | `UUID` | ``SyncValue/string(_:)``, lowercase |
/// | `Bool` | ``SyncValue/bool(_:)`` |
/// | `Int`, `Int8` … `Int64`, and unsigned integers up to `Int64.max` | ``SyncValue/integer(_:)`` |
/// | unsigned integers above `Int64.max` | ``SyncValue/unsignedInteger(_:)`` |
/// | `Float`, `Double` | ``SyncValue/real(_:)`` |
/// | `Date` | ``SyncValue/date(_:)`` |
/// | `Data` | ``SyncValue/data(_:)`` (a `[UInt8]` stays an array of integers) |
/// | `SyncValue` | itself |
/// | `nil` | key left out, or ``SyncValue/null`` (see ``nilEncodingStrategy``) |
/// | structs, dictionaries | ``SyncValue/dictionary(_:)`` |
/// | arrays, sets | ``SyncValue/array(_:)`` |
///
/// The encoder writes straight into `SyncValue`s, without a detour through
/// JSON or `Any`.
public struct SyncValueEncoder: Sendable {
    /// What a `nil` optional property becomes.
    public enum NilEncodingStrategy: Sendable, Hashable {
        /// The key is left out of the dictionary (the default): property lists
        /// cannot carry ``SyncValue/null``, and a missing key decodes as `nil`.
        case omitKey
        /// The key is written with ``SyncValue/null`` (JSON and MessagePack carry it).
        case null
    }

    /// What a `nil` optional property becomes; ``NilEncodingStrategy/omitKey`` by default.
    ///
    /// The strategy covers keyed values (`encodeIfPresent` and `encodeNil(forKey:)`,
    /// which synthesized `Codable` uses for optional properties). A `nil` in an
    /// array, such as `[Int?]`, is always ``SyncValue/null`` so that positions
    /// are kept.
    public var nilEncodingStrategy: NilEncodingStrategy
    /// Values handed to every `encode(to:)` as `encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Makes an encoder.
    /// - Parameters:
    ///   - nilEncodingStrategy: What a `nil` optional property becomes.
    ///   - userInfo: Values handed to every `encode(to:)`.
    public init(
        nilEncodingStrategy: NilEncodingStrategy = .omitKey,
        userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) {
        self.nilEncodingStrategy = nilEncodingStrategy
        self.userInfo = userInfo
    }

    /// Encodes a value.
    ///
    /// - Returns: The value as a ``SyncValue``.
    /// - Throws: `EncodingError.invalidValue` for a value that encodes nothing,
    ///   or whatever the value's own `encode(to:)` throws.
    public func encode<Value: Encodable>(_ value: Value) throws -> SyncValue {
        let encoder = SyncValueEncoding(options: SyncValueEncoding.Options(
            nilEncodingStrategy: nilEncodingStrategy, userInfo: userInfo), codingPath: [])
        guard let encoded = try encoder.encodeNested(value, at: nil) else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(codingPath: [], debugDescription: "\(Value.self) did not encode any value"))
        }
        return encoded
    }
}
