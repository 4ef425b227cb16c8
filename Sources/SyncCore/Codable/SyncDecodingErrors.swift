/// The `DecodingError`s of ``SyncValueDecoder``, with messages that name what was found.
enum SyncDecodingErrors {
    /// `valueNotFound` for a null, `typeMismatch` for anything else.
    static func mismatch(
        _ type: Any.Type, expected: String, found value: SyncValue, at path: [any CodingKey], hint: String = ""
    ) -> DecodingError {
        if case .null = value {
            return .valueNotFound(
                type, DecodingError.Context(codingPath: path, debugDescription: "Expected \(expected) but found null"))
        }
        return .typeMismatch(
            type,
            DecodingError.Context(
                codingPath: path, debugDescription: "Expected \(expected) but found \(describe(value))\(hint)"))
    }

    /// `dataCorrupted`: the value has the right kind but not a usable content.
    static func corrupted(_ message: String, at path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: message))
    }

    /// `keyNotFound` for a missing key.
    static func missingKey(_ key: any CodingKey, at path: [any CodingKey]) -> DecodingError {
        .keyNotFound(
            key, DecodingError.Context(codingPath: path, debugDescription: "No value for the key \"\(key.stringValue)\""))
    }

    /// A short description of a value for an error message: its kind and, for scalars, its content.
    static func describe(_ value: SyncValue) -> String {
        switch value {
        case .null: "null"
        case .string(let string): "the string \(CodecError.quoted(string))"
        case .integer(let integer): "the integer \(integer)"
        case .unsignedInteger(let integer): "the integer \(integer)"
        case .real(let real): "the real \(real)"
        case .bool(let bool): "the Boolean \(bool)"
        case .date(let date): CodecError.describing(date)
        case .data(let bytes): "data of \(bytes.count) bytes"
        case .array(let elements): "an array of \(elements.count) elements"
        case .dictionary(let entries): "a dictionary of \(entries.count) entries"
        }
    }
}
