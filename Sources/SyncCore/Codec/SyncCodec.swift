#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Turns bytes into a ``SyncValue`` and back, in one wire format.
///
/// Codecs are values: pure, `Sendable` and cheap to copy. Every decoder
/// enforces its ``limits`` — input size, nesting depth and element count —
/// and reports bad input as a ``CodecError``, never by crashing.
///
/// ```swift
/// let codec = JSONCodec()
/// let bytes = try codec.encode(["name": "Ada"])
/// let value = try codec.decode(bytes)
/// ```
///
/// ## Implementing a codec
/// - Decode to canonical values: ``SyncValue/unsignedInteger(_:)`` only above
///   `Int64.max`, no duplicate dictionary keys (a duplicate is malformed input).
/// - Encode dictionary keys in sorted order, so equal values give equal bytes.
/// - Reject a value the format cannot carry with
///   ``CodecError/Code/unsupportedValue`` rather than changing it; list what
///   the format does carry in ``features``.
/// - Check your codec with `CodecVerifier` from `SyncTesting`.
public protocol SyncCodec: Sendable {
    /// The codec's identity, as used on the command line and in benchmarks.
    var id: CodecID { get }
    /// The media types this codec reads, the primary (the one it answers with) first.
    var mediaTypes: [String] { get }
    /// The limits the decoder enforces.
    var limits: CodecLimits { get }
    /// What the format carries beyond strings, numbers, Booleans, arrays and dictionaries.
    var features: CodecFeatures { get }

    /// Encodes a value.
    /// - Throws: ``CodecError`` with ``CodecError/Code/unsupportedValue`` for a
    ///   value the format cannot carry, ``CodecError/Code/limitExceeded`` for
    ///   one nested deeper than ``limits``.
    func encode(_ value: SyncValue) throws(CodecError) -> [UInt8]

    /// Decodes one value that spans all of `bytes`.
    /// - Throws: ``CodecError`` with ``CodecError/Code/malformedInput`` or
    ///   ``CodecError/Code/limitExceeded``.
    func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue
}

extension SyncCodec {
    /// The media type this codec answers with.
    public var primaryMediaType: String { mediaTypes[0] }

    /// Whether `mediaType` (parameters such as `; charset=utf-8` ignored, case-insensitive) names this codec.
    public func accepts(mediaType: String) -> Bool {
        // Most requests name a type exactly as the codec spells it.
        if mediaTypes.contains(mediaType) { return true }
        let essence = MediaType.essence(of: mediaType)
        return mediaTypes.contains { $0 == essence }
    }
}

/// The name of a codec: `xml-plist`, `binary-plist`, `json`, `msgpack`, or one of your own.
public struct CodecID: RawRepresentable, Hashable, Comparable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The codec's name.
    public var rawValue: String
    /// Makes a codec id.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Makes a codec id from a literal.
    public init(stringLiteral value: String) { self.rawValue = value }
    /// The codec's name.
    public var description: String { rawValue }
    /// Orders ids by name.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Apple's XML property list.
    public static let xmlPlist: CodecID = "xml-plist"
    /// Apple's binary property list, `bplist00`.
    public static let binaryPlist: CodecID = "binary-plist"
    /// JSON (RFC 8259).
    public static let json: CodecID = "json"
    /// MessagePack.
    public static let messagePack: CodecID = "msgpack"
}

/// What a format carries beyond strings, numbers, Booleans, arrays and dictionaries.
public struct CodecFeatures: OptionSet, Hashable, Sendable {
    /// The bits.
    public var rawValue: UInt8
    /// Makes a feature set.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// ``SyncValue/null``.
    public static let null = CodecFeatures(rawValue: 1 << 0)
    /// ``SyncValue/date(_:)`` as its own type (not as a string).
    public static let date = CodecFeatures(rawValue: 1 << 1)
    /// ``SyncValue/data(_:)`` as its own type (not as a string).
    public static let data = CodecFeatures(rawValue: 1 << 2)
    /// ``SyncValue/unsignedInteger(_:)``.
    public static let unsignedInteger = CodecFeatures(rawValue: 1 << 3)
    /// Non-finite reals (infinity, NaN).
    public static let nonFiniteReal = CodecFeatures(rawValue: 1 << 4)
}

/// The limits a decoder enforces, so that hostile input cannot exhaust memory or the stack.
public struct CodecLimits: Hashable, Sendable {
    /// The largest input accepted, in bytes.
    public var maxInputBytes: Int
    /// The deepest nesting of arrays and dictionaries accepted.
    public var maxDepth: Int
    /// The most values (scalars and containers together) one input may hold.
    public var maxElementCount: Int

    /// Makes limits.
    public init(maxInputBytes: Int = 64 << 20, maxDepth: Int = 256, maxElementCount: Int = 8_000_000) {
        self.maxInputBytes = maxInputBytes
        self.maxDepth = maxDepth
        self.maxElementCount = maxElementCount
    }

    /// 64 MiB, depth 256, 8 million values.
    public static let `default` = CodecLimits()
}

extension CodecLimits {
    /// Runs `read` on the bytes of `input` once they are known to fit in ``maxInputBytes``: how a decoder starts.
    /// - Throws: ``CodecError`` with ``CodecError/Code/limitExceeded`` for a larger input, or what `read` throws.
    package func withInput<Value>(
        _ input: [UInt8], _ read: (UnsafeBufferPointer<UInt8>) throws(CodecError) -> Value
    ) throws(CodecError) -> Value {
        guard input.count <= maxInputBytes else {
            throw .limitExceeded("input of \(input.count) bytes is larger than the limit of \(maxInputBytes) bytes")
        }
        return try input.withUnsafeBufferPointer { buffer throws(CodecError) in try read(buffer) }
    }
}

/// Why a codec failed: a closed set of codes, a message a person can act on,
/// and where known the byte offset of the problem.
///
/// Match on ``code``: `catch let error as CodecError where error.code == .limitExceeded`.
public struct CodecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The input is not valid in the format: truncated, garbage, a bad escape, a duplicate key.
        public static let malformedInput = Code("malformed input")
        /// The input or value goes past a ``CodecLimits`` limit.
        public static let limitExceeded = Code("limit exceeded")
        /// The value holds something the format cannot carry, such as `null` in a property list.
        public static let unsupportedValue = Code("unsupported value")
        /// The underlying library failed (out of memory, an internal error).
        public static let backendFailure = Code("backend failure")
        /// The code's name.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, for a person.
    public var message: String
    /// The byte offset in the input where the problem was found, when known.
    public var offset: Int?

    /// Makes an error. The message is kept to one line: line breaks in it
    /// (a C library's message often ends one) become spaces.
    public init(_ code: Code, _ message: String, offset: Int? = nil) {
        self.code = code
        self.message = Self.oneLine(message)
        self.offset = offset
    }

    /// Input that is not valid in the format.
    public static func malformedInput(_ message: String, offset: Int? = nil) -> CodecError {
        CodecError(.malformedInput, message, offset: offset)
    }
    /// Input or a value past a limit.
    public static func limitExceeded(_ message: String, offset: Int? = nil) -> CodecError {
        CodecError(.limitExceeded, message, offset: offset)
    }
    /// A value the format cannot carry.
    public static func unsupportedValue(_ message: String) -> CodecError {
        CodecError(.unsupportedValue, message)
    }

    /// `code: message (at byte N)`.
    public var description: String {
        if let offset { return "\(code): \(message) (at byte \(offset))" }
        return "\(code): \(message)"
    }

    /// Text from the input (a dictionary key, a string) quoted for a message:
    /// escaped as a Swift string literal, so a line break or a control
    /// character in it cannot break the message's line, and shortened past 64
    /// characters.
    public static func quoted(_ text: String) -> String {
        let scalars = text.unicodeScalars
        let shown = scalars.count > 64 ? String(String.UnicodeScalarView(scalars.prefix(64))) + "…" : text
        return String(reflecting: shown)
    }

    /// A date for a message, for any `Date` value: seconds since 1970, or what
    /// makes it no date at all. (`Date.description` traps on a date that is
    /// not a number.)
    public static func describing(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        if seconds.isNaN { return "a date that is not a number (NaN)" }
        if seconds.isInfinite { return "a date at \(seconds < 0 ? "-" : "+")infinity" }
        // Years 1 to 9999, where ISO 8601 text is defined and exact to the millisecond.
        guard (-62_135_596_800.0...253_402_300_799.0).contains(seconds) else {
            return "the date \(seconds) s from 1970-01-01T00:00:00Z"
        }
        return "the date " + date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// `message` with every run of line breaks and the spaces around it made one space.
    private static func oneLine(_ message: String) -> String {
        guard message.contains(where: \.isNewline) else { return message }
        return message.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
            .joined(separator: " ")
    }
}

/// Helpers for media type strings.
public enum MediaType {
    /// The type without parameters, lowercased: `"Application/JSON; charset=utf-8"` → `"application/json"`.
    public static func essence(of mediaType: String) -> String {
        let base = mediaType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return base.trimmingWhitespace().lowercased()
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
