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

    /// An open container: its kind, and where its elements start in ``values`` and its keys in ``keys``.
    private struct OpenContainer {
        enum Kind { case array, dictionary }
        let kind: Kind
        let firstValue: Int
        let firstKey: Int
    }

    /// The open containers, innermost last.
    private var containers: [OpenContainer] = []
    /// The values read so far of every open container, the innermost's last: a container is made
    /// once, at its final size, when it closes.
    private var values: [SyncValue] = []
    /// The keys (and their offsets) read so far of every open dictionary, the innermost's last; a
    /// dictionary's last key may still wait for its value.
    private var keys: [(key: String, offset: Int)] = []

    init(input: UnsafeBufferPointer<UInt8>, limits: CodecLimits) {
        self.input = input
        self.limits = limits
    }

    /// How many containers around the value being parsed are open outside this parser's stack (those
    /// a reader of records' stored fields opened): they count against the depth limit.
    var outerDepth = 0

    /// Parses the one value that spans the input, with optional white space around it.
    mutating func parseDocument() throws(CodecError) -> SyncValue {
        if startsWithByteOrderMark {
            throw .malformedInput("a byte order mark is not allowed before a JSON text", offset: 0)
        }
        let value = try parseValue()
        skipWhitespace()
        guard index == input.count else {
            throw .malformedInput(
                "unexpected \(JSONByte.describe(input[index])) after the JSON value", offset: index)
        }
        return value
    }

    /// Whether the input starts with a UTF-8 byte order mark, which JSON does not allow.
    var startsWithByteOrderMark: Bool {
        input.count >= 3 && input[0] == 0xEF && input[1] == 0xBB && input[2] == 0xBF
    }

    /// Parses one value, after optional white space, and leaves ``index`` just after it.
    mutating func parseValue() throws(CodecError) -> SyncValue {
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
                    containers.append(OpenContainer(kind: .array, firstValue: values.count, firstKey: keys.count))
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
                    containers.append(OpenContainer(kind: .dictionary, firstValue: values.count, firstKey: keys.count))
                    try parseMemberKey(expectation: "expected a string key or '}'")
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
            while let container = containers.last {
                skipWhitespace()
                values.append(value)
                switch container.kind {
                case .array:
                    guard index < input.count else { throw endOfInput("expected ',' or ']' after an array element") }
                    let byte = input[index]
                    index += 1
                    if byte == JSONByte.comma { continue nextValue }
                    guard byte == JSONByte.closeBracket else {
                        index -= 1
                        throw .malformedInput(
                            "expected ',' or ']' after an array element, found \(JSONByte.describe(byte))", offset: index)
                    }
                    containers.removeLast()
                    value = .array(Array(values[container.firstValue...]))
                    values.removeSubrange(container.firstValue...)
                case .dictionary:
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
                    containers.removeLast()
                    value = .dictionary(try closeDictionary(container))
                }
            }
            break nextValue
        }
        return value
    }

    /// The dictionary of `container`'s keys and values, which leave the stacks.
    /// - Throws: ``CodecError/malformedInput(_:offset:)`` at the second of two equal keys.
    private mutating func closeDictionary(_ container: OpenContainer) throws(CodecError) -> [String: SyncValue] {
        var dictionary = [String: SyncValue](minimumCapacity: keys.count - container.firstKey)
        for (key, value) in zip(keys[container.firstKey...], values[container.firstValue...]) {
            if dictionary.updateValue(value, forKey: key.key) != nil {
                throw .malformedInput("duplicate key \(CodecError.quoted(key.key))", offset: key.offset)
            }
        }
        keys.removeSubrange(container.firstKey...)
        values.removeSubrange(container.firstValue...)
        return dictionary
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
        keys.append((key, offset))
    }

    /// Refuses to open a container past the depth limit.
    private func checkDepth() throws(CodecError) {
        if outerDepth + containers.count >= limits.maxDepth {
            throw .limitExceeded("nesting deeper than \(limits.maxDepth) levels", offset: index)
        }
    }

    /// Reads `true`, `false` or `null`.
    mutating func parseLiteral(_ literal: StaticString) throws(CodecError) {
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
