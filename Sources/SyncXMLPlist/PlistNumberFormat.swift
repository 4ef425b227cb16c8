import SyncCore

/// The text of `<integer>` and `<real>`, read and written without Foundation.
enum PlistNumberFormat {
    /// The integer `text` names: decimal or `0x` hexadecimal, with an optional
    /// sign, surrounded by optional white space; `nil` when it is not one or
    /// does not fit (`Int64`, or `UInt64` for positive values).
    static func integer(parsing text: UnsafeBufferPointer<UInt8>) -> SyncValue? {
        var index = 0
        var end = text.count
        while index < end, isWhitespace(text[index]) { index += 1 }
        while end > index, isWhitespace(text[end - 1]) { end -= 1 }
        var negative = false
        if index < end, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            negative = text[index] == UInt8(ascii: "-")
            index += 1
        }
        var radix: UInt64 = 10
        if end - index > 2, text[index] == UInt8(ascii: "0"), text[index + 1] | 0x20 == UInt8(ascii: "x") {
            radix = 16
            index += 2
        }
        guard index < end else { return nil }
        var magnitude: UInt64 = 0
        while index < end {
            let byte = text[index]
            let digit: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: digit = UInt64(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: digit = UInt64(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            let (shifted, overflow1) = magnitude.multipliedReportingOverflow(by: radix)
            let (sum, overflow2) = shifted.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            magnitude = sum
            index += 1
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
        }
        return SyncValue.integer(exactly: magnitude)
    }

    /// The real `text` names: a decimal number (`1`, `-2.5`, `.5`, `6.02e23`) or
    /// one of `nan`, `inf`, `infinity` with an optional sign (any case),
    /// surrounded by optional white space; `nil` otherwise. A decimal too large
    /// for `Double` reads as infinity, as `strtod` reads it.
    static func real(parsing text: UnsafeBufferPointer<UInt8>) -> Double? {
        var start = 0
        var end = text.count
        while start < end, isWhitespace(text[start]) { start += 1 }
        while end > start, isWhitespace(text[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        let body = UnsafeBufferPointer(rebasing: text[start..<end])
        if let special = nonFinite(body) { return special }
        guard isDecimal(body) else { return nil }
        return Double(String(decoding: body, as: UTF8.self))
    }

    /// Appends the shortest text that reads back as exactly `value`
    /// (`nan`, `+infinity` and `-infinity` for the non-finite ones, as Apple writes them).
    static func append(real value: Double, to out: inout ByteOutput) {
        if value.isNaN {
            out.append("nan")
        } else if value.isInfinite {
            out.append(value < 0 ? "-infinity" : "+infinity")
        } else {
            var text = value.description
            text.withUTF8 { out.append(contentsOf: $0) }
        }
    }

    /// Appends the decimal digits of `value`.
    @inline(__always)
    static func append(integer value: Int64, to out: inout ByteOutput) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        out.appendDecimal(value.magnitude)
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    private static func nonFinite(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        var sign = 1.0
        if text[0] == UInt8(ascii: "-") || text[0] == UInt8(ascii: "+") {
            sign = text[0] == UInt8(ascii: "-") ? -1 : 1
            index = 1
        }
        let word = String(decoding: UnsafeBufferPointer(rebasing: text[index...]), as: UTF8.self).lowercased()
        switch word {
        case "nan": return .nan
        case "inf", "infinity": return sign * .infinity
        default: return nil
        }
    }

    /// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`
    private static func isDecimal(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        func isDigit(_ i: Int) -> Bool { i < text.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[i]) }
        if text[0] == UInt8(ascii: "-") || text[0] == UInt8(ascii: "+") { index = 1 }
        var mantissaDigits = 0
        while isDigit(index) { index += 1; mantissaDigits += 1 }
        if index < text.count, text[index] == UInt8(ascii: ".") {
            index += 1
            while isDigit(index) { index += 1; mantissaDigits += 1 }
        }
        guard mantissaDigits > 0 else { return false }
        if index < text.count, text[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < text.count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") { index += 1 }
            guard isDigit(index) else { return false }
            while isDigit(index) { index += 1 }
        }
        return index == text.count
    }
}
