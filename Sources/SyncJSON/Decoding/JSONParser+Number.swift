import SyncCore

extension JSONParser {
    /// Reads a number: an integer (no fraction, no exponent) as
    /// ``SyncValue/integer(_:)`` or ``SyncValue/unsignedInteger(_:)``, anything
    /// else as a correctly rounded ``SyncValue/real(_:)``.
    mutating func parseNumber() throws(CodecError) -> SyncValue {
        let start = index
        var position = index
        let negative = input[position] == JSONByte.minus
        if negative { position += 1 }

        // Integer part: 0, or a non-zero digit followed by digits.
        guard position < input.count else { throw endOfInput("expected a digit after '-'") }
        guard JSONByte.isDigit(input[position]) else {
            throw .malformedInput("expected a digit after '-', found \(JSONByte.describe(input[position]))", offset: position)
        }
        var significand: UInt64 = 0
        var significandOverflowed = false
        if input[position] == JSONByte.zero {
            position += 1
            if position < input.count && JSONByte.isDigit(input[position]) {
                throw .malformedInput("leading zeros are not allowed in a number", offset: start)
            }
        } else {
            while position < input.count && JSONByte.isDigit(input[position]) {
                accumulate(input[position], into: &significand, overflowed: &significandOverflowed)
                position += 1
            }
        }

        // Fraction.
        var isReal = false
        var fractionDigits = 0
        if position < input.count && input[position] == JSONByte.dot {
            isReal = true
            position += 1
            guard position < input.count else { throw endOfInput("expected a digit after '.'") }
            guard JSONByte.isDigit(input[position]) else {
                throw .malformedInput("expected a digit after '.', found \(JSONByte.describe(input[position]))", offset: position)
            }
            while position < input.count && JSONByte.isDigit(input[position]) {
                accumulate(input[position], into: &significand, overflowed: &significandOverflowed)
                fractionDigits += 1
                position += 1
            }
        }

        // Exponent.
        var exponent = 0
        if position < input.count && (input[position] == JSONByte.lowercaseE || input[position] == JSONByte.uppercaseE) {
            isReal = true
            position += 1
            var exponentNegative = false
            if position < input.count && (input[position] == JSONByte.plus || input[position] == JSONByte.minus) {
                exponentNegative = input[position] == JSONByte.minus
                position += 1
            }
            guard position < input.count else { throw endOfInput("expected a digit in the exponent") }
            guard JSONByte.isDigit(input[position]) else {
                throw .malformedInput(
                    "expected a digit in the exponent, found \(JSONByte.describe(input[position]))", offset: position)
            }
            while position < input.count && JSONByte.isDigit(input[position]) {
                // Saturate: anything this large is out of range anyway, and the slow path reads the text itself.
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(input[position] - JSONByte.zero) }
                position += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        index = position

        guard isReal else {
            return try integerValue(significand, negative: negative, overflowed: significandOverflowed, at: start)
        }
        let real = fastReal(significand, exponent: exponent - fractionDigits, overflowed: significandOverflowed)
            ?? slowReal(from: start, to: position)
        guard real.isFinite else {
            throw .limitExceeded("number out of range: it overflows a 64-bit floating-point value", offset: start)
        }
        return .real(negative ? -real : real)
    }

    /// Adds a decimal digit to `significand`, noting when it no longer fits.
    @inline(__always)
    private func accumulate(_ digit: UInt8, into significand: inout UInt64, overflowed: inout Bool) {
        guard !overflowed else { return }
        let (times10, overflow1) = significand.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit - JSONByte.zero))
        if overflow1 || overflow2 { overflowed = true } else { significand = sum }
    }

    /// The canonical integer value of a sign and magnitude.
    private func integerValue(_ magnitude: UInt64, negative: Bool, overflowed: Bool, at start: Int) throws(CodecError) -> SyncValue {
        // Made only when thrown: a message is built from text, and this runs for every integer read.
        func outOfRange() -> CodecError {
            CodecError.limitExceeded("number out of range: integers must lie between -2^63 and 2^64-1", offset: start)
        }
        if overflowed { throw outOfRange() }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw outOfRange() }
            return .integer(magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude))
        }
        if magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
        return .unsignedInteger(magnitude)
    }

    /// Clinger's fast path: when the significand and the power of ten are both
    /// exact doubles, one multiplication or division is correctly rounded.
    @inline(__always)
    private func fastReal(_ significand: UInt64, exponent: Int, overflowed: Bool) -> Double? {
        guard !overflowed, significand <= 1 << 53, exponent >= -22, exponent <= 22 else { return nil }
        let value = Double(significand)
        return exponent >= 0 ? value * Self.powersOfTen[exponent] : value / Self.powersOfTen[-exponent]
    }

    /// Reads the validated number text with the standard library's correctly rounded conversion.
    private func slowReal(from start: Int, to end: Int) -> Double {
        // Skip the sign: the caller applies it, so that -0.0 and overflow are handled in one place.
        let digitsStart = input[start] == JSONByte.minus ? start + 1 : start
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[digitsStart..<end]), as: UTF8.self)
        // The text matched JSON's number grammar, which Double's parser accepts.
        return Double(text) ?? .nan
    }

    /// 10^0 through 10^22, every one exact in a `Double`.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
