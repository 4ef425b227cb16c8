import SyncCore

/// Reads one JSON text into a ``SyncValue``, byte by byte.
///
/// The parser keeps its own stack of open containers instead of recursing,
/// so the depth of the input never touches the thread's stack; the depth
/// limit still applies. It lives only inside the `withUnsafeBufferPointer`
/// scope of ``JSONCodec/decode(_:)``.
struct JSONParser {
    /// The whole input.
    let input: UnsafeBufferPointer<UInt8>
    /// The limits to enforce.
    let limits: CodecLimits
    /// The offset of the next byte to read.
    var index = 0
    /// How many values (scalars and containers) have been started so far.
    var elementCount = 0
    /// Reused buffer for strings that hold escapes.
    var scratch: [UInt8] = []

    private enum ContainerKind { case array, dictionary }

    /// The open containers, innermost last.
    private var kinds: [ContainerKind] = []
    /// The elements of each open array, innermost last.
    private var arrays: [[SyncValue]] = []
    /// The entries of each open dictionary, innermost last.
    private var dictionaries: [[String: SyncValue]] = []
    /// The key (and its offset) whose value is being read, one per open dictionary.
    private var pendingKeys: [(key: String, offset: Int)] = []

    init(input: UnsafeBufferPointer<UInt8>, limits: CodecLimits) {
        self.input = input
        self.limits = limits
    }

    /// Parses the one value that spans the input, with optional white space around it.
    mutating func parseDocument() throws(CodecError) -> SyncValue {
        if input.count >= 3 && input[0] == 0xEF && input[1] == 0xBB && input[2] == 0xBF {
            throw .malformedInput("a byte order mark is not allowed before a JSON text", offset: 0)
        }
        var value: SyncValue
        nextValue: while true {
            skipWhitespace()
            // Read a scalar, or open a container and go read its first element.
            guard index < input.count else { throw endOfInput("expected a value") }
            elementCount += 1
            if elementCount > limits.maxElementCount {
                throw .limitExceeded("more than \(limits.maxElementCount) values", offset: index)
            }
            switch input[index] {
            case JSONByte.openBracket:
                try checkDepth()
                index += 1
                skipWhitespace()
                if index < input.count && input[index] == JSONByte.closeBracket {
                    index += 1
                    value = .array([])
                } else {
                    kinds.append(.array)
                    arrays.append([])
                    continue nextValue
                }
            case JSONByte.openBrace:
                try checkDepth()
                index += 1
                skipWhitespace()
                if index < input.count && input[index] == JSONByte.closeBrace {
                    index += 1
                    value = .dictionary([:])
                } else {
                    try parseMemberKey(expectation: "expected a string key or '}'")
                    kinds.append(.dictionary)
                    dictionaries.append([:])
                    continue nextValue
                }
            case JSONByte.quote:
                value = .string(try parseString())
            case JSONByte.minus, JSONByte.zero...JSONByte.nine:
                value = try parseNumber()
            case UInt8(ascii: "t"):
                try parseLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try parseLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try parseLiteral("null")
                value = .null
            case let byte:
                throw .malformedInput("expected a value, found \(JSONByte.describe(byte))", offset: index)
            }

            // A value is complete: add it to the innermost container, closing
            // containers for as long as their closing bracket follows.
            while let kind = kinds.last {
                skipWhitespace()
                switch kind {
                case .array:
                    arrays[arrays.count - 1].append(value)
                    guard index < input.count else { throw endOfInput("expected ',' or ']' after an array element") }
                    let byte = input[index]
                    index += 1
                    if byte == JSONByte.comma { continue nextValue }
                    guard byte == JSONByte.closeBracket else {
                        index -= 1
                        throw .malformedInput(
                            "expected ',' or ']' after an array element, found \(JSONByte.describe(byte))", offset: index)
                    }
                    kinds.removeLast()
                    value = .array(arrays.removeLast())
                case .dictionary:
                    let pending = pendingKeys.removeLast()
                    if dictionaries[dictionaries.count - 1].updateValue(value, forKey: pending.key) != nil {
                        throw .malformedInput("duplicate key \(CodecError.quoted(pending.key))", offset: pending.offset)
                    }
                    guard index < input.count else { throw endOfInput("expected ',' or '}' after an object member") }
                    let byte = input[index]
                    index += 1
                    if byte == JSONByte.comma {
                        skipWhitespace()
                        try parseMemberKey(expectation: "expected a string key after ','")
                        continue nextValue
                    }
                    guard byte == JSONByte.closeBrace else {
                        index -= 1
                        throw .malformedInput(
                            "expected ',' or '}' after an object member, found \(JSONByte.describe(byte))", offset: index)
                    }
                    kinds.removeLast()
                    value = .dictionary(dictionaries.removeLast())
                }
            }
            break nextValue
        }
        skipWhitespace()
        guard index == input.count else {
            throw .malformedInput(
                "unexpected \(JSONByte.describe(input[index])) after the JSON value", offset: index)
        }
        return value
    }

    /// Reads `"key"` and the `:` after it, and remembers the key for the value that follows.
    private mutating func parseMemberKey(expectation: String) throws(CodecError) {
        guard index < input.count else { throw endOfInput(expectation) }
        guard input[index] == JSONByte.quote else {
            throw .malformedInput("\(expectation), found \(JSONByte.describe(input[index]))", offset: index)
        }
        let offset = index
        let key = try parseString()
        skipWhitespace()
        guard index < input.count else { throw endOfInput("expected ':' after object key") }
        guard input[index] == JSONByte.colon else {
            throw .malformedInput("expected ':' after object key, found \(JSONByte.describe(input[index]))", offset: index)
        }
        index += 1
        pendingKeys.append((key, offset))
    }

    /// Refuses to open a container past the depth limit.
    private func checkDepth() throws(CodecError) {
        if kinds.count >= limits.maxDepth {
            throw .limitExceeded("nesting deeper than \(limits.maxDepth) levels", offset: index)
        }
    }

    /// Reads `true`, `false` or `null`.
    private mutating func parseLiteral(_ literal: StaticString) throws(CodecError) {
        let start = index
        let length = literal.utf8CodeUnitCount
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: length)
        for offset in 0..<length {
            guard start + offset < input.count else { throw endOfInput("expected '\(literal)'") }
            guard input[start + offset] == expected[offset] else {
                throw .malformedInput("expected '\(literal)'", offset: start)
            }
        }
        index = start + length
    }

    /// Moves past JSON white space.
    @inline(__always)
    mutating func skipWhitespace() {
        while index < input.count && JSONByte.isWhitespace(input[index]) { index += 1 }
    }

    /// The error for input that ends too soon.
    func endOfInput(_ expectation: String) -> CodecError {
        .malformedInput("unexpected end of input: \(expectation)", offset: input.count)
    }
}
