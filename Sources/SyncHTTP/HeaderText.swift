extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional white space).
    package var trimmedOfHTTPWhitespace: String {
        String(Substring(Substring(self).utf8.trimmingHTTPWhitespace))
    }
}

extension Substring.UTF8View {
    /// These bytes without leading and trailing spaces and tabs (HTTP's optional white space); both are
    /// one byte in UTF-8, so what is left starts and ends on a character boundary.
    package var trimmingHTTPWhitespace: Substring.UTF8View {
        func isWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) })
        else { return self[endIndex...] }
        return self[first...last]
    }
}
