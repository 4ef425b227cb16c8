#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(ucrt)
import ucrt
#endif

/// A decoded value kept as one flat list of nodes over the bytes it was read from: what a decoder
/// makes without allocating per value, the way msgpack-c's zone keeps its `msgpack_object`s.
///
/// A ``SyncValue`` owns every string, byte array, array and dictionary it holds, and building one
/// costs an allocation and, for a dictionary, a hash per entry. A document holds the input and one
/// array of fixed-size nodes in the order the values appear; strings and data are places in the
/// input, checked (UTF-8, duplicate keys, limits) but not copied. Read the parts you need through
/// ``Node``, or make the whole ``SyncValue`` with ``Node/value``:
///
/// ```swift
/// let document = try MessagePackCodec().decodeDocument(bytes)
/// for record in document.root["records"]?.elements ?? [] {
///     print(record["name"]?.stringValue ?? "?")
/// }
/// let value: SyncValue = document.root.value   // the same value `decode(_:)` gives
/// ```
///
/// A document is immutable and `Sendable`, and keeps its input alive while any node of it is in use.
public struct SyncDocument: Sendable {
    /// The bytes the document was read from; strings and data are places in them.
    let input: [UInt8]
    /// The values in the order they appear, a container before its contents and a map's key before
    /// its value; the root is the first.
    let storage: SlotStorage

    /// Makes a document of the slots `writer` holds over `input`: for decoders, which have checked
    /// every slot. The document takes the writer's memory.
    package init(input: [UInt8], slots writer: consuming SlotWriter) {
        self.input = input
        self.storage = SlotStorage(writer)
    }

    /// The value the whole input holds.
    public var root: Node { Node(document: self, index: 0) }

    /// How many nodes the document holds: values and map keys.
    public var nodeCount: Int { storage.count }

    /// Calls `body` with the slots and the bytes they point into; valid only during the call.
    package func withSlots<Result>(
        _ body: (UnsafeBufferPointer<Slot>, UnsafeBufferPointer<UInt8>) throws(Never) -> Result
    ) -> Result {
        withExtendedLifetime(storage) { input.withUnsafeBufferPointer { body(slots, $0) } }
    }

    /// The slots, for reading.
    @inline(__always)
    var slots: UnsafeBufferPointer<Slot> { UnsafeBufferPointer(start: storage.base, count: storage.count) }

    /// The memory of a document's slots, freed with the last document that uses it.
    final class SlotStorage: Sendable {
        /// The first slot; read only once the storage exists.
        nonisolated(unsafe) let base: UnsafeMutablePointer<Slot>
        /// How many slots there are.
        let count: Int

        init(_ writer: consuming SlotWriter) {
            (base, count) = writer.take()
        }

        deinit { free(base) }
    }

    /// A growable list of slots that a decoder appends to, for codec readers: no uniqueness check per
    /// append as an array makes, and growth by `realloc`, which moves large blocks without copying them.
    /// A document takes its memory.
    @frozen
    public struct SlotWriter: ~Copyable {
        @usableFromInline var base: UnsafeMutablePointer<Slot>
        @usableFromInline var capacity: Int
        /// How many slots have been appended.
        public var count: Int { appended }
        @usableFromInline var appended = 0

        /// Makes a writer with room for `capacity` slots before it grows.
        public init(capacity: Int) {
            self.capacity = Swift.max(capacity, 16)
            base = Self.reallocate(nil, capacity: self.capacity)
        }

        /// Appends `slot`.
        @inlinable @inline(__always)
        public mutating func append(_ slot: Slot) {
            if appended == capacity { grow() }
            (base + appended).initialize(to: slot)
            appended += 1
        }

        /// The slot at `index`, which must be below ``count``.
        @inlinable
        public subscript(index: Int) -> Slot {
            @inline(__always) get { base[index] }
            @inline(__always) set { base[index] = newValue }
        }

        @usableFromInline @inline(never)
        mutating func grow() {
            capacity *= 2
            base = Self.reallocate(base, capacity: capacity)
        }

        private static func reallocate(_ pointer: UnsafeMutablePointer<Slot>?, capacity: Int) -> UnsafeMutablePointer<Slot> {
            let bytes = capacity * MemoryLayout<Slot>.stride
            guard let moved = realloc(pointer, bytes) else { fatalError("out of memory for \(bytes) bytes of slots") }
            return moved.bindMemory(to: Slot.self, capacity: capacity)
        }

        /// Hands over the memory, cut to the slots appended, which the caller must `free`.
        consuming func take() -> (UnsafeMutablePointer<Slot>, Int) {
            let taken = (capacity > appended ? Self.reallocate(base, capacity: Swift.max(appended, 1)) : base, appended)
            discard self
            return taken
        }

        deinit { free(base) }
    }

    /// One value in a document, in 16 bytes: a scalar, or a container whose contents follow it.
    @frozen
    public struct Slot: Sendable {
        /// The integer's or real's bits, a date's `timeIntervalSinceReferenceDate` bits, or the offset
        /// of a string's or data's bytes in the input.
        public var payload: UInt64
        /// A string's or data's length in bytes, an array's elements, a map's entries.
        public var length: UInt32
        /// The kind in the top four bits; below them the index of the first slot after this value and
        /// everything inside it.
        @usableFromInline var kindAndEnd: UInt32

        /// The most slots a document holds: ends must fit below the kind's four bits.
        @inlinable public static var maxCount: Int { 0x0FFF_FFFF }

        /// Makes a slot; a container's ``end`` is set once its contents are read.
        @inlinable @inline(__always)
        public init(kind: SlotKind, payload: UInt64 = 0, length: UInt32 = 0, end: Int) {
            self.payload = payload
            self.length = length
            self.kindAndEnd = UInt32(kind.rawValue) << 28 | UInt32(truncatingIfNeeded: end)
        }

        /// What the value is.
        @inlinable @inline(__always)
        public var kind: SlotKind { SlotKind(rawValue: UInt8(truncatingIfNeeded: kindAndEnd >> 28)) ?? .null }

        /// The index of the first slot after this value and everything inside it.
        @inlinable
        public var end: Int {
            get { Int(kindAndEnd & 0x0FFF_FFFF) }
            set { kindAndEnd = kindAndEnd & 0xF000_0000 | UInt32(truncatingIfNeeded: newValue) }
        }
    }

    /// The kinds of slot: ``SyncValue``'s cases, with ASCII strings told apart from others.
    public enum SlotKind: UInt8, Sendable {
        /// ``SyncValue/null``.
        case null
        /// `false`.
        case falseValue
        /// `true`.
        case trueValue
        /// ``SyncValue/integer(_:)``: the payload is the `Int64`'s bits.
        case integer
        /// ``SyncValue/unsignedInteger(_:)``: the payload is the number.
        case unsignedInteger
        /// ``SyncValue/real(_:)``: the payload is the `Double`'s bits.
        case real
        /// ``SyncValue/date(_:)``: the payload is the bits of its `timeIntervalSinceReferenceDate`.
        case date
        /// ``SyncValue/data(_:)``: the payload is the offset of the bytes in the input.
        case data
        /// A string of ASCII bytes only: the payload is the offset of its bytes in the input.
        case asciiString
        /// A string with non-ASCII UTF-8 bytes: the payload is the offset of its bytes in the input.
        case string
        /// ``SyncValue/array(_:)``: its elements follow.
        case array
        /// ``SyncValue/dictionary(_:)``: its entries follow, each key (a string slot) before its value.
        case dictionary
    }
}

extension SyncDocument {
    /// One value of a ``SyncDocument``: read its scalar, walk its contents, or make it a ``SyncValue``.
    public struct Node: Sendable {
        /// The document the node is in.
        public let document: SyncDocument
        /// The node's place in the document's order of values.
        public let index: Int

        @inline(__always)
        init(document: SyncDocument, index: Int) {
            self.document = document
            self.index = index
        }

        @inline(__always)
        var slot: Slot { document.slots[index] }

        /// The kind of value.
        public var kind: SyncValue.Kind {
            switch slot.kind {
            case .null: .null
            case .falseValue, .trueValue: .bool
            case .integer, .unsignedInteger: .integer
            case .real: .real
            case .date: .date
            case .data: .data
            case .asciiString, .string: .string
            case .array: .array
            case .dictionary: .dictionary
            }
        }

        /// Whether the value is `null`.
        public var isNull: Bool { slot.kind == .null }

        /// The string, if this is a string.
        public var stringValue: String? {
            let slot = slot
            guard slot.kind == .asciiString || slot.kind == .string else { return nil }
            return document.string(at: slot)
        }

        /// The integer, if this is an integer that fits `Int64`.
        public var integerValue: Int64? {
            let slot = slot
            switch slot.kind {
            case .integer: return Int64(bitPattern: slot.payload)
            case .unsignedInteger: return Int64(exactly: slot.payload)
            default: return nil
            }
        }

        /// The integer, if this is one at or above zero.
        public var unsignedIntegerValue: UInt64? {
            let slot = slot
            switch slot.kind {
            case .integer: return UInt64(exactly: Int64(bitPattern: slot.payload))
            case .unsignedInteger: return slot.payload
            default: return nil
            }
        }

        /// The number as a `Double`, if this is a real or an integer.
        public var realValue: Double? {
            let slot = slot
            switch slot.kind {
            case .real: return Double(bitPattern: slot.payload)
            case .integer: return Double(Int64(bitPattern: slot.payload))
            case .unsignedInteger: return Double(slot.payload)
            default: return nil
            }
        }

        /// The Boolean, if this is one.
        public var boolValue: Bool? {
            switch slot.kind {
            case .trueValue: true
            case .falseValue: false
            default: nil
            }
        }

        /// The date, if this is one.
        public var dateValue: Date? {
            let slot = slot
            guard slot.kind == .date else { return nil }
            return Date(timeIntervalSinceReferenceDate: Double(bitPattern: slot.payload))
        }

        /// The bytes, without copying them out of the input, if this is data.
        public var bytes: ArraySlice<UInt8>? {
            let slot = slot
            guard slot.kind == .data else { return nil }
            return document.input[document.range(of: slot)]
        }

        /// The bytes, copied, if this is data.
        public var dataValue: [UInt8]? { bytes.map(Array.init) }

        /// The number of elements of an array or entries of a dictionary; 0 for a scalar.
        public var count: Int {
            let slot = slot
            return slot.kind == .array || slot.kind == .dictionary ? Int(slot.length) : 0
        }

        /// The elements, if this is an array.
        public var elements: [Node]? {
            let slot = slot
            guard slot.kind == .array else { return nil }
            var elements: [Node] = []
            elements.reserveCapacity(Int(slot.length))
            var child = index + 1
            for _ in 0..<slot.length {
                elements.append(Node(document: document, index: child))
                child = document.slots[child].end
            }
            return elements
        }

        /// The entries in the order the input gives them, if this is a dictionary.
        public var entries: [(key: String, value: Node)]? {
            let slot = slot
            guard slot.kind == .dictionary else { return nil }
            var entries: [(key: String, value: Node)] = []
            entries.reserveCapacity(Int(slot.length))
            var key = index + 1
            for _ in 0..<slot.length {
                entries.append((document.string(at: document.slots[key]), Node(document: document, index: key + 1)))
                key = document.slots[key + 1].end
            }
            return entries
        }

        /// The value under `key`, if this is a dictionary that has it. Keys are compared by their
        /// UTF-8 bytes; a lookup walks the entries.
        public subscript(key: String) -> Node? {
            let slot = slot
            guard slot.kind == .dictionary else { return nil }
            var key = key
            return key.withUTF8 { wanted in
                document.input.withUnsafeBufferPointer { input in
                    var candidate = index + 1
                    for _ in 0..<slot.length {
                        let keySlot = document.slots[candidate]
                        if keySlot.length == wanted.count,
                            KeyOrder.compare(UnsafeBufferPointer(rebasing: input[document.range(of: keySlot)]), wanted) == 0
                        {
                            return Node(document: document, index: candidate + 1)
                        }
                        candidate = document.slots[candidate + 1].end
                    }
                    return nil
                }
            }
        }

        /// The element at `position`, if this is an array that long.
        public subscript(position: Int) -> Node? {
            let slot = slot
            guard slot.kind == .array, position >= 0, position < Int(slot.length) else { return nil }
            var child = index + 1
            for _ in 0..<position { child = document.slots[child].end }
            return Node(document: document, index: child)
        }

        /// The node as a ``SyncValue``, owning all it holds: what the codec's `decode(_:)` returns.
        public var value: SyncValue { document.makeValue(at: index) }
    }
}

// MARK: - Making values

extension SyncDocument {
    /// The range of the input a string or data slot names.
    @inline(__always)
    func range(of slot: Slot) -> Range<Int> {
        let start = Int(slot.payload)
        return start..<start + Int(slot.length)
    }

    /// The text of a string slot (checked as UTF-8 when the document was made).
    @inline(__always)
    func string(at slot: Slot) -> String {
        input.withUnsafeBufferPointer { input in
            String(decoding: UnsafeBufferPointer(rebasing: input[range(of: slot)]), as: UTF8.self)
        }
    }

    /// The value of the slot at `root` and everything inside it, built with a stack of open containers
    /// rather than recursion, so that deep input never touches the thread's stack.
    func makeValue(at root: Int) -> SyncValue {
        /// One open array or dictionary.
        struct Frame {
            var isDictionary: Bool
            var remaining: UInt32
            var key: String
        }
        var frames: [Frame] = []
        var arrays: [[SyncValue]] = []
        var dictionaries: [[String: SyncValue]] = []
        var index = root
        return withSlots { slots, input in
            func text(_ slot: Slot) -> String {
                String(decoding: UnsafeBufferPointer(rebasing: input[range(of: slot)]), as: UTF8.self)
            }
            while true {
                let slot = slots[index]
                index += 1
                var value: SyncValue
                switch slot.kind {
                case .null: value = .null
                case .falseValue: value = .bool(false)
                case .trueValue: value = .bool(true)
                case .integer: value = .integer(Int64(bitPattern: slot.payload))
                case .unsignedInteger: value = .unsignedInteger(slot.payload)
                case .real: value = .real(Double(bitPattern: slot.payload))
                case .date: value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: slot.payload)))
                case .data: value = .data(Array(UnsafeBufferPointer(rebasing: input[range(of: slot)])))
                case .asciiString, .string: value = .string(text(slot))
                case .array:
                    guard slot.length > 0 else {
                        value = .array([])
                        break
                    }
                    var elements: [SyncValue] = []
                    elements.reserveCapacity(Int(slot.length))
                    arrays.append(elements)
                    frames.append(Frame(isDictionary: false, remaining: slot.length, key: ""))
                    continue
                case .dictionary:
                    guard slot.length > 0 else {
                        value = .dictionary([:])
                        break
                    }
                    dictionaries.append(Dictionary(minimumCapacity: Int(slot.length)))
                    frames.append(Frame(isDictionary: true, remaining: slot.length, key: text(slots[index])))
                    index += 1
                    continue
                }
                // `value` is complete: add it to the containers it completes.
                while !frames.isEmpty {
                    let top = frames.count - 1
                    if frames[top].isDictionary {
                        dictionaries[dictionaries.count - 1][frames[top].key] = value
                    } else {
                        arrays[arrays.count - 1].append(value)
                    }
                    frames[top].remaining -= 1
                    if frames[top].remaining > 0 {
                        if frames[top].isDictionary {
                            frames[top].key = text(slots[index])
                            index += 1
                        }
                        break
                    }
                    value =
                        frames.removeLast().isDictionary
                        ? .dictionary(dictionaries.removeLast()) : .array(arrays.removeLast())
                }
                if frames.isEmpty { return value }
            }
        }
    }
}
