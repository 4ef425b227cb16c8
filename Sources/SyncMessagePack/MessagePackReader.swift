internal import CAnchorageMsgPackShim
import SyncCore

/// Reads one MessagePack value into a ``SyncValue`` with the shim's pull
/// reader, which hands over one value header at a time.
///
/// The reader keeps its own stack of open containers instead of recursing, so
/// the depth of the input never touches the thread's stack; the depth limit
/// still applies. Every length and count has been checked against the bytes
/// that remain before it is used, and no more than ``reservationLimit``
/// elements are reserved up front, so a header cannot make the reader
/// allocate more than the input could hold. It lives only inside the
/// `withUnsafeBufferPointer` scope of ``MessagePackCodec/decode(_:)``.
struct MessagePackReader {
    /// The whole input.
    private let input: UnsafeBufferPointer<UInt8>
    /// The limits to enforce.
    private let limits: CodecLimits
    /// The offset of the next byte to read.
    private var position = 0
    /// How many values (scalars and containers, not map keys) have been started so far.
    private var valueCount = 0

    /// The most elements reserved for a container before they are read.
    static let reservationLimit = 4096

    /// One open array or map.
    private struct Frame {
        /// Whether it is a map.
        var isMap: Bool
        /// Items still to read: elements, or key/value pairs.
        var remaining: UInt32
        /// The key whose value is being read, in a map.
        var key: String
        /// The offset of that key.
        var keyOffset: Int
    }

    /// The open containers, innermost last.
    private var frames: [Frame] = []
    /// The elements of each open array, innermost last.
    private var arrays: [[SyncValue]] = []
    /// The entries of each open map, innermost last.
    private var dictionaries: [[String: SyncValue]] = []

    init(input: UnsafeBufferPointer<UInt8>, limits: CodecLimits) {
        self.input = input
        self.limits = limits
    }

    /// Reads the one value that spans the whole input.
    mutating func readDocument() throws(CodecError) -> SyncValue {
        var value: SyncValue
        nextValue: while true {
            let start = position
            let token = try readToken(expecting: "a value")
            valueCount += 1
            if valueCount > limits.maxElementCount {
                throw .limitExceeded("the input holds more than the limit of \(limits.maxElementCount) values", offset: start)
            }
            switch token.kind {
            case ANCH_MP_NIL: value = .null
            case ANCH_MP_FALSE: value = .bool(false)
            case ANCH_MP_TRUE: value = .bool(true)
            case ANCH_MP_INTEGER: value = .integer(token.integer)
            case ANCH_MP_UNSIGNED_INTEGER: value = .unsignedInteger(token.unsigned_integer)
            case ANCH_MP_REAL: value = .real(token.real)
            case ANCH_MP_STR: value = .string(try string(of: token, at: start))
            case ANCH_MP_BIN:
                value = .data([UInt8](UnsafeBufferPointer(rebasing: input[token.payload..<token.payload + Int(token.length)])))
            case ANCH_MP_TIMESTAMP:
                guard let date = MessagePackTimestamp.date(seconds: token.integer, nanoseconds: token.length) else {
                    throw .limitExceeded(
                        "the timestamp \(token.integer) s after 1970 is outside the range of dates (±2^52 s)", offset: start)
                }
                value = .date(date)
            case ANCH_MP_ARRAY:
                try checkDepth(at: start)
                if token.length == 0 {
                    value = .array([])
                } else {
                    var elements: [SyncValue] = []
                    elements.reserveCapacity(min(Int(token.length), Self.reservationLimit))
                    arrays.append(elements)
                    frames.append(Frame(isMap: false, remaining: token.length, key: "", keyOffset: 0))
                    continue nextValue
                }
            case ANCH_MP_MAP:
                try checkDepth(at: start)
                if token.length == 0 {
                    value = .dictionary([:])
                } else {
                    dictionaries.append(Dictionary(minimumCapacity: min(Int(token.length), Self.reservationLimit)))
                    let (key, keyOffset) = try readKey()
                    frames.append(Frame(isMap: true, remaining: token.length, key: key, keyOffset: keyOffset))
                    continue nextValue
                }
            default:
                throw failure(token, at: start)
            }

            // `value` is complete: add it to the open containers it completes.
            while !frames.isEmpty {
                let top = frames.count - 1
                if frames[top].isMap {
                    let key = frames[top].key
                    if dictionaries[dictionaries.count - 1].updateValue(value, forKey: key) != nil {
                        throw .malformedInput("the map has the key \(CodecError.quoted(key)) twice", offset: frames[top].keyOffset)
                    }
                } else {
                    arrays[arrays.count - 1].append(value)
                }
                frames[top].remaining -= 1
                if frames[top].remaining > 0 {
                    if frames[top].isMap {
                        let (key, keyOffset) = try readKey()
                        frames[top].key = key
                        frames[top].keyOffset = keyOffset
                    }
                    continue nextValue
                }
                value = frames.removeLast().isMap ? .dictionary(dictionaries.removeLast()) : .array(arrays.removeLast())
            }
            guard position == input.count else {
                throw .malformedInput("\(input.count - position) bytes follow the value", offset: position)
            }
            return value
        }
    }

    /// Reads the next header, failing at the end of the input.
    @inline(__always)
    private mutating func readToken(expecting what: String) throws(CodecError) -> anch_mp_token {
        guard position < input.count else {
            throw .malformedInput("the input ends where \(what) should start", offset: position)
        }
        var token = anch_mp_token()
        position = anch_mp_read(input.baseAddress, input.count, position, &token)
        return token
    }

    /// Reads a map key, which must be a str.
    private mutating func readKey() throws(CodecError) -> (String, Int) {
        let start = position
        let token = try readToken(expecting: "a map key")
        guard token.kind == ANCH_MP_STR else {
            if token.kind.rawValue >= ANCH_MP_ERROR_TRUNCATED.rawValue { throw failure(token, at: start) }
            throw .malformedInput(
                "a map key is \(Self.describe(token.kind)), but keys must be strings", offset: start)
        }
        return (try string(of: token, at: start), start)
    }

    /// The text of a str, refused unless it is valid UTF-8.
    @inline(__always)
    private func string(of token: anch_mp_token, at start: Int) throws(CodecError) -> String {
        let bytes = UnsafeBufferPointer(rebasing: input[token.payload..<token.payload + Int(token.length)])
        guard let string = UTF8Validation.string(bytes) else {
            throw .malformedInput("a str of \(token.length) bytes is not valid UTF-8", offset: start)
        }
        return string
    }

    /// Refuses a container that would open deeper than the limit.
    @inline(__always)
    private func checkDepth(at start: Int) throws(CodecError) {
        if frames.count >= limits.maxDepth {
            throw .limitExceeded("arrays and maps nest deeper than the limit of \(limits.maxDepth)", offset: start)
        }
    }

    /// The error for a header the shim could not read.
    private func failure(_ token: anch_mp_token, at start: Int) -> CodecError {
        let remaining = input.count - start
        switch token.kind {
        case ANCH_MP_ERROR_TRUNCATED:
            return .malformedInput("the input ends inside a value header (\(remaining) bytes remain)", offset: start)
        case ANCH_MP_ERROR_RESERVED_BYTE:
            return .malformedInput("0xc1 is never used in MessagePack", offset: start)
        case ANCH_MP_ERROR_LENGTH_PAST_END:
            return .malformedInput(
                "a length of \(token.detail) bytes runs past the end of the input (\(remaining) bytes remain)",
                offset: start)
        case ANCH_MP_ERROR_COUNT_PAST_END:
            return .malformedInput(
                "a count of \(token.detail) items cannot fit in the \(remaining) bytes that remain", offset: start)
        case ANCH_MP_ERROR_UNSUPPORTED_EXTENSION:
            return .malformedInput(
                "extension type \(token.detail) is not supported (the only extension read is the timestamp, -1)",
                offset: start)
        case ANCH_MP_ERROR_TIMESTAMP_SIZE:
            return .malformedInput("a timestamp must be 4, 8 or 12 bytes long, not \(token.detail)", offset: start)
        case ANCH_MP_ERROR_TIMESTAMP_NANOSECONDS:
            return .malformedInput(
                "a timestamp with \(token.detail) nanoseconds (it must be less than 1,000,000,000)", offset: start)
        default:
            return .malformedInput("unexpected \(Self.describe(token.kind))", offset: start)
        }
    }

    /// The name of a kind of value, for error messages.
    private static func describe(_ kind: anch_mp_kind) -> String {
        switch kind {
        case ANCH_MP_NIL: "nil"
        case ANCH_MP_FALSE, ANCH_MP_TRUE: "a bool"
        case ANCH_MP_INTEGER, ANCH_MP_UNSIGNED_INTEGER: "an integer"
        case ANCH_MP_REAL: "a float"
        case ANCH_MP_STR: "a str"
        case ANCH_MP_BIN: "a bin"
        case ANCH_MP_ARRAY: "an array"
        case ANCH_MP_MAP: "a map"
        case ANCH_MP_TIMESTAMP: "a timestamp"
        default: "an unreadable value"
        }
    }
}
