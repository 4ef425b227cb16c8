internal import CAnchorageMsgPackShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Reads one MessagePack value into a ``SyncCore/SyncDocument`` with the shim's pull reader, which
/// hands over one value header at a time.
///
/// Each value becomes one fixed-size slot appended to one array, in the order the values appear;
/// strings and bin stay in the input, checked but not copied; nothing else is allocated per value.
/// The reader keeps its own stack of open containers instead of recursing, so the depth of the input
/// never touches the thread's stack; the depth limit still applies. Every length and count has been
/// checked against the bytes that remain before it is used. It lives only inside the
/// `withUnsafeBufferPointer` scope of ``MessagePackCodec/decodeDocument(_:)``.
///
/// A map's keys are checked for duplicates without hashing while they are ASCII and in ascending
/// byte order (how every encoder Anchorage knows writes them); from the first key that is not, the
/// map's keys go into a set of strings, so that canonically equivalent spellings are one key, as in
/// a Swift dictionary.
struct MessagePackReader: ~Copyable {
    /// The whole input.
    private let input: UnsafeBufferPointer<UInt8>
    /// The limits to enforce.
    private let limits: CodecLimits
    /// The offset of the next byte to read.
    private var position = 0
    /// How many values (scalars and containers, not map keys) have been started so far.
    private var valueCount = 0
    /// The header read last, read field by field where it lies (copying it whole after the shim's
    /// stores to it stalls the processor).
    private var token = anch_mp_token()
    /// The values read so far, and map keys.
    private var slots: SyncDocument.SlotWriter

    /// The most slots reserved before the input is read: about one per eight bytes of input.
    static let reservationLimit = 1 << 16

    /// One open array or map (plain bits, so that the stack of them costs no reference counting).
    private struct Frame {
        /// The container's slot.
        var slot: Int
        /// Items still to read: elements, or key/value pairs.
        var remaining: UInt32
        /// Whether it is a map.
        var isMap: Bool
        /// The input offset and length of the map's last key while its keys are ASCII and ascending;
        /// `previousKeyStart` is -1 before the first key.
        var previousKeyStart = -1
        var previousKeyLength = 0
        /// The map's keys in ``keySets``, once one was not ASCII or not in ascending order; -1 before.
        var keySet = -1

        /// No container.
        static let none = Frame(slot: -1, remaining: 0, isMap: false)
    }

    /// The innermost open container; its `slot` is -1 when none is open. It is kept apart from the
    /// others, which are touched only when it closes, so that reading a value costs no array access.
    private var current = Frame.none
    /// The open containers around ``current``, innermost last.
    private var parents: [Frame] = []
    /// The keys of open maps whose keys are checked with a set, innermost last.
    private var keySets: [Set<String>] = []

    init(input: UnsafeBufferPointer<UInt8>, limits: CodecLimits) {
        self.input = input
        self.limits = limits
        slots = SyncDocument.SlotWriter(capacity: min(input.count / 8 + 1, Self.reservationLimit))
    }

    /// Reads the one value that spans the whole input.
    /// - Returns: its slots, for a ``SyncCore/SyncDocument`` over the input.
    consuming func readDocument() throws(CodecError) -> SyncDocument.SlotWriter {
        nextValue: while true {
            let start = position
            try readToken(expecting: "a value")
            valueCount += 1
            if valueCount > limits.maxElementCount {
                throw .limitExceeded("the input holds more than the limit of \(limits.maxElementCount) values", offset: start)
            }
            try checkSlotCount(at: start)
            let next = slots.count + 1
            switch token.kind {
            case ANCH_MP_NIL: slots.append(.init(kind: .null, end: next))
            case ANCH_MP_FALSE: slots.append(.init(kind: .falseValue, end: next))
            case ANCH_MP_TRUE: slots.append(.init(kind: .trueValue, end: next))
            case ANCH_MP_INTEGER:
                slots.append(.init(kind: .integer, payload: UInt64(bitPattern: token.integer), end: next))
            case ANCH_MP_UNSIGNED_INTEGER:
                slots.append(.init(kind: .unsignedInteger, payload: token.unsigned_integer, end: next))
            case ANCH_MP_REAL: slots.append(.init(kind: .real, payload: token.real.bitPattern, end: next))
            case ANCH_MP_STR: slots.append(try stringSlot(token, at: start))
            case ANCH_MP_BIN:
                slots.append(.init(kind: .data, payload: UInt64(token.payload), length: token.length, end: next))
            case ANCH_MP_TIMESTAMP:
                guard let date = MessagePackTimestamp.date(seconds: token.integer, nanoseconds: token.length) else {
                    throw .limitExceeded(
                        "the timestamp \(token.integer) s after 1970 is outside the range of dates (±2^52 s)", offset: start)
                }
                slots.append(.init(kind: .date, payload: date.timeIntervalSinceReferenceDate.bitPattern, end: next))
            case ANCH_MP_ARRAY, ANCH_MP_MAP:
                try checkDepth(at: start)
                let isMap = token.kind == ANCH_MP_MAP
                slots.append(.init(kind: isMap ? .dictionary : .array, length: token.length, end: next))
                if token.length > 0 {
                    if current.slot >= 0 { parents.append(current) }
                    current = Frame(slot: slots.count - 1, remaining: token.length, isMap: isMap)
                    if isMap { try readKey() }
                    continue nextValue
                }
            default:
                throw failure(token, at: start)
            }

            // A value is complete: count it in the open containers it completes.
            while current.slot >= 0 {
                current.remaining -= 1
                if current.remaining > 0 {
                    if current.isMap { try readKey() }
                    continue nextValue
                }
                slots[current.slot].end = slots.count
                if current.keySet >= 0 { keySets.removeLast() }
                current = parents.popLast() ?? .none
            }
            guard position == input.count else {
                throw .malformedInput("\(input.count - position) bytes follow the value", offset: position)
            }
            return slots
        }
    }

    /// Reads the next header, failing at the end of the input.
    @inline(__always)
    private mutating func readToken(expecting what: String) throws(CodecError) {
        guard position < input.count else {
            throw .malformedInput("the input ends where \(what) should start", offset: position)
        }
        position = anch_mp_read(input.baseAddress, input.count, position, &token)
    }

    /// Reads the next key of the innermost map, which must be a str and not one of the map's keys so far.
    private mutating func readKey() throws(CodecError) {
        let start = position
        try readToken(expecting: "a map key")
        guard token.kind == ANCH_MP_STR else {
            if token.kind.rawValue >= ANCH_MP_ERROR_TRUNCATED.rawValue { throw failure(token, at: start) }
            throw .malformedInput(
                "a map key is \(Self.describe(token.kind)), but keys must be strings", offset: start)
        }
        try checkSlotCount(at: start)
        let slot = try stringSlot(token, at: start)
        let keyStart = token.payload
        let keyLength = Int(token.length)
        if current.keySet < 0 {
            let previousStart = current.previousKeyStart
            let ascending =
                slot.kind == .asciiString
                && (previousStart < 0
                    || KeyOrder.compare(
                        UnsafeBufferPointer(rebasing: input[previousStart..<previousStart + current.previousKeyLength]),
                        UnsafeBufferPointer(rebasing: input[keyStart..<keyStart + keyLength])) < 0)
            if ascending {
                current.previousKeyStart = keyStart
                current.previousKeyLength = keyLength
            } else {
                keySets.append(keysRead(in: current))
                current.keySet = keySets.count - 1
            }
        }
        if current.keySet >= 0 {
            let key = String(decoding: UnsafeBufferPointer(rebasing: input[keyStart..<keyStart + keyLength]), as: UTF8.self)
            if !keySets[keySets.count - 1].insert(key).inserted {
                throw .malformedInput("the map has the key \(CodecError.quoted(key)) twice", offset: start)
            }
        }
        slots.append(slot)
    }

    /// The keys of the entries `frame`, a map, holds so far.
    private func keysRead(in frame: Frame) -> Set<String> {
        let entries = Int(slots[frame.slot].length - frame.remaining)
        var keys = Set<String>(minimumCapacity: entries + 1)
        var key = frame.slot + 1
        for _ in 0..<entries {
            let slot = slots[key]
            let start = Int(slot.payload)
            keys.insert(String(decoding: UnsafeBufferPointer(rebasing: input[start..<start + Int(slot.length)]), as: UTF8.self))
            key = slots[key + 1].end
        }
        return keys
    }

    /// The slot of a str, refused unless its bytes are valid UTF-8.
    @inline(__always)
    private func stringSlot(_ token: anch_mp_token, at start: Int) throws(CodecError) -> SyncDocument.Slot {
        let bytes = UnsafeBufferPointer(rebasing: input[token.payload..<token.payload + Int(token.length)])
        guard let ascii = UTF8Validation.classify(bytes) else {
            throw .malformedInput("a str of \(token.length) bytes is not valid UTF-8", offset: start)
        }
        return .init(
            kind: ascii ? .asciiString : .string, payload: UInt64(token.payload), length: token.length,
            end: slots.count + 1)
    }

    /// Refuses a value past the most slots a document holds.
    @inline(__always)
    private func checkSlotCount(at start: Int) throws(CodecError) {
        if slots.count >= SyncDocument.Slot.maxCount {
            throw .limitExceeded("the input holds more than \(SyncDocument.Slot.maxCount) values and keys", offset: start)
        }
    }

    /// Refuses a container that would open deeper than the limit.
    @inline(__always)
    private func checkDepth(at start: Int) throws(CodecError) {
        if (current.slot >= 0 ? parents.count + 1 : 0) >= limits.maxDepth {
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
