/// Splits the bytes a server sends into whole responses: a line, and when it
/// ends in a literal's announcement (`{n}`, `{n+}`, `~{n}`), the literal's n bytes and
/// the rest of the response after it, as many times as it has literals.
///
/// ```swift
/// var framer = IMAPResponseFramer()
/// framer.append(bytes)
/// while let unit = try framer.next() { print(try IMAPParser.parse(unit)) }
/// ```
public struct IMAPResponseFramer: Sendable {
    /// The largest responses accepted.
    public struct Limits: Sendable, Hashable {
        /// The longest line, literals excluded (64 KiB by default).
        public var maxLineBytes: Int
        /// The largest literal (64 MiB by default).
        public var maxLiteralBytes: Int
        /// The largest whole response, literals included (128 MiB by default).
        public var maxResponseBytes: Int

        /// Makes limits.
        public init(maxLineBytes: Int = 64 << 10, maxLiteralBytes: Int = 64 << 20, maxResponseBytes: Int = 128 << 20) {
            self.maxLineBytes = max(64, maxLineBytes)
            self.maxLiteralBytes = max(0, maxLiteralBytes)
            self.maxResponseBytes = max(self.maxLineBytes, maxResponseBytes)
        }
    }

    /// The limits in force.
    public let limits: Limits
    private var buffer: [UInt8] = []
    /// Where the line being looked at starts (bytes before it belong to the current response).
    private var lineStart = 0
    /// Where to look for the end of the line from (bytes before it hold no line feed).
    private var searchFrom = 0

    /// Makes a framer.
    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Adds bytes received.
    public mutating func append(_ bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

    /// How many bytes are held that make no whole response yet.
    public var bufferedBytes: Int { buffer.count }

    /// The next whole response's bytes (line ends and literals included), or `nil` until more bytes arrive.
    /// - Throws: ``IMAPError`` when a line, a literal or the response passes its limit.
    public mutating func next() throws(IMAPError) -> [UInt8]? {
        while true {
            guard let lineFeed = buffer[searchFrom...].firstIndex(of: 10) else {
                searchFrom = buffer.count
                if buffer.count - lineStart > limits.maxLineBytes {
                    throw IMAPError("the server sent a line longer than \(limits.maxLineBytes) bytes")
                }
                return nil
            }
            if lineFeed - lineStart > limits.maxLineBytes {
                throw IMAPError("the server sent a line longer than \(limits.maxLineBytes) bytes")
            }
            if let length = try Self.literalLength(buffer, lineStart: lineStart, lineFeed: lineFeed) {
                guard length <= limits.maxLiteralBytes else {
                    throw IMAPError("the server announced a literal of \(length) bytes, more than the \(limits.maxLiteralBytes) accepted")
                }
                let end = lineFeed + 1 + length
                guard end <= limits.maxResponseBytes else {
                    throw IMAPError("the server sent a response larger than \(limits.maxResponseBytes) bytes")
                }
                guard buffer.count >= end else { return nil }
                lineStart = end
                searchFrom = end
                continue
            }
            let unit = Array(buffer[...lineFeed])
            buffer.removeFirst(lineFeed + 1)
            lineStart = 0
            searchFrom = 0
            return unit
        }
    }

    /// The length of the literal a line announces at its end, or `nil` when it announces none.
    static func literalLength(_ bytes: [UInt8], lineStart: Int, lineFeed: Int) throws(IMAPError) -> Int? {
        var end = lineFeed
        if end > lineStart && bytes[end - 1] == 13 { end -= 1 }
        guard end > lineStart, bytes[end - 1] == UInt8(ascii: "}") else { return nil }
        var index = end - 2
        if index >= lineStart && bytes[index] == UInt8(ascii: "+") { index -= 1 }
        var digits = 0
        var value = 0
        var scale = 1
        while index >= lineStart, bytes[index] >= 48, bytes[index] <= 57 {
            digits += 1
            guard digits <= 18 else { throw IMAPError("the server announced a literal with an absurd length") }
            value += Int(bytes[index] - 48) * scale
            scale *= 10
            index -= 1
        }
        guard digits > 0, index >= lineStart, bytes[index] == UInt8(ascii: "{") else { return nil }
        return value
    }
}
