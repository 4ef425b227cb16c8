import SyncCore

extension JSONParser {
    /// Reads a string starting at its opening quote, checking escapes and UTF-8.
    mutating func parseString() throws(CodecError) -> String {
        if let range = try parseStringUTF8() {
            return String(decoding: UnsafeBufferPointer(rebasing: input[range]), as: UTF8.self)
        }
        return String(decoding: scratch, as: UTF8.self)
    }

    /// Reads a string starting at its opening quote, checking escapes and UTF-8: the range of the input
    /// that holds its UTF-8 bytes, or `nil` when it holds escapes and its bytes are in ``scratch``.
    mutating func parseStringUTF8() throws(CodecError) -> Range<Int>? {
        let start = index + 1
        var position = start
        // Fast path: printable ASCII without escapes, the common case for keys.
        while position < input.count {
            let byte = input[position]
            if byte == JSONByte.quote {
                index = position + 1
                return start..<position
            }
            if byte == JSONByte.backslash || byte < 0x20 || byte >= 0x80 { break }
            position += 1
        }
        return try parseStringSlowly(start: start, from: position)
    }

    /// Reads the rest of a string that holds escapes, control characters or non-ASCII bytes.
    private mutating func parseStringSlowly(start: Int, from resume: Int) throws(CodecError) -> Range<Int>? {
        var position = resume
        var runStart = start
        var unescaped = true
        scratch.removeAll(keepingCapacity: true)
        while true {
            guard position < input.count else { throw endOfInput("unterminated string starting at byte \(start - 1)") }
            let byte = input[position]
            if byte == JSONByte.quote {
                index = position + 1
                if unescaped { return start..<position }
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart..<position]))
                return nil
            } else if byte == JSONByte.backslash {
                unescaped = false
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart..<position]))
                position = try parseEscape(at: position)
                runStart = position
            } else if byte < 0x20 {
                throw .malformedInput(
                    "control character U+00\(JSONByte.hex2(byte)) in string must be escaped", offset: position)
            } else if byte < 0x80 {
                position += 1
            } else {
                position = try validateUTF8Sequence(at: position)
            }
        }
    }

    /// Decodes the escape at `position` (a backslash) into ``scratch``; returns the offset after it.
    private mutating func parseEscape(at position: Int) throws(CodecError) -> Int {
        guard position + 1 < input.count else { throw endOfInput("unterminated escape sequence in string") }
        let decoded: UInt8
        switch input[position + 1] {
        case JSONByte.quote: decoded = JSONByte.quote
        case JSONByte.backslash: decoded = JSONByte.backslash
        case JSONByte.slash: decoded = JSONByte.slash
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = 0x0A
        case UInt8(ascii: "r"): decoded = 0x0D
        case UInt8(ascii: "t"): decoded = 0x09
        case JSONByte.lowercaseU: return try parseUnicodeEscape(at: position)
        case let other:
            throw .malformedInput("invalid escape '\\' followed by \(JSONByte.describe(other)) in string", offset: position)
        }
        scratch.append(decoded)
        return position + 2
    }

    /// Decodes `\uXXXX`, or a surrogate pair `\uD8XX\uDCXX`, at `position`; returns the offset after it.
    private mutating func parseUnicodeEscape(at position: Int) throws(CodecError) -> Int {
        let unit = try hexQuad(at: position + 2)
        var scalarValue = UInt32(unit)
        var end = position + 6
        switch unit {
        case 0xD800..<0xDC00:
            guard end + 1 < input.count, input[end] == JSONByte.backslash, input[end + 1] == JSONByte.lowercaseU else {
                throw .malformedInput(
                    "lone surrogate \\u\(Self.hex4(unit)) in string: a high surrogate must be followed by a low one",
                    offset: position)
            }
            let low = try hexQuad(at: end + 2)
            guard (0xDC00..<0xE000).contains(low) else {
                throw .malformedInput(
                    "lone surrogate \\u\(Self.hex4(unit)) in string: followed by \\u\(Self.hex4(low)), not a low surrogate",
                    offset: position)
            }
            scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            end += 6
        case 0xDC00..<0xE000:
            throw .malformedInput(
                "lone surrogate \\u\(Self.hex4(unit)) in string: a low surrogate without a high one", offset: position)
        default:
            break
        }
        // Every value outside the surrogate range is a valid scalar.
        UTF8Encoding.append(Unicode.Scalar(scalarValue)!, to: &scratch)
        return end
    }

    /// The four hex digits at `position`, as a UTF-16 code unit.
    private func hexQuad(at position: Int) throws(CodecError) -> UInt16 {
        var unit: UInt16 = 0
        for offset in position..<(position + 4) {
            guard offset < input.count else { throw endOfInput("expected 4 hex digits after \\u") }
            let byte = input[offset]
            let digit: UInt8
            switch byte {
            case JSONByte.zero...JSONByte.nine: digit = byte - JSONByte.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw .malformedInput("expected 4 hex digits after \\u, found \(JSONByte.describe(byte))", offset: offset)
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    /// Checks the multi-byte UTF-8 sequence starting at `position` (Unicode
    /// Table 3-7: no overlong forms, no encoded surrogates, nothing above
    /// U+10FFFF, nothing truncated); returns the offset after it.
    private func validateUTF8Sequence(at position: Int) throws(CodecError) -> Int {
        let lead = input[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default:
            throw .malformedInput("invalid UTF-8 in string: \(JSONByte.describe(lead)) cannot start a character", offset: position)
        }
        guard position + 1 < input.count, secondRange.contains(input[position + 1]) else {
            throw .malformedInput("invalid UTF-8 in string: bad or missing continuation byte", offset: position)
        }
        for offset in (position + 2)..<(position + length) {
            guard offset < input.count, input[offset] & 0xC0 == 0x80 else {
                throw .malformedInput("invalid UTF-8 in string: bad or missing continuation byte", offset: position)
            }
        }
        return position + length
    }

    /// Four uppercase hex digits, for error messages.
    private static func hex4(_ unit: UInt16) -> String {
        JSONByte.hex2(UInt8(unit >> 8)) + JSONByte.hex2(UInt8(unit & 0xFF))
    }
}
