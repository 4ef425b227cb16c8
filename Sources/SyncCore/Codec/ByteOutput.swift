#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(ucrt)
import ucrt
#endif

/// Bytes written through a pointer, for codec writers: either into memory the caller provides (the
/// uninitialized storage of the array an encoder returns, sized beforehand from the value), or into a
/// buffer of its own that grows with `realloc`. Should provided memory fall short, the bytes move to a
/// buffer of their own ("spill"). Its methods are inlinable, so a codec in another module writes at the
/// speed of one in this one; change its properties only through them.
///
/// ```swift
/// let bytes = ByteOutput.bytes(capacity: 64) { output in
///     output.append("<plist>")
///     output.append(0x0A)
/// }
/// ```
@frozen
public struct ByteOutput {
    /// The first byte.
    public var start: UnsafeMutablePointer<UInt8>
    /// How many bytes are written.
    public var count = 0
    /// How many bytes fit before the buffer must grow.
    public var capacity: Int
    /// Whether the bytes moved to a buffer this output allocated (free it with ``releaseSpill()``).
    public var isSpilled = false

    /// An output writing into the `capacity` bytes at `start`.
    @inlinable
    public init(start: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.start = start
        self.capacity = capacity
    }

    /// Makes room for `extra` more bytes, so that as many unchecked appends may follow.
    @inlinable @inline(__always)
    public mutating func reserve(_ extra: Int) {
        if _slowPath(capacity &- count < extra) { grow(toHold: count + extra) }
    }

    /// Moves the bytes to a larger buffer of at least `minimum` bytes: grows a buffer of its own in place
    /// when it can.
    @inlinable @inline(never)
    public mutating func grow(toHold minimum: Int) {
        let newCapacity = Swift.max(minimum, capacity * 2, 64)
        if isSpilled {
            guard let moved = realloc(start, newCapacity) else { fatalError("out of memory for \(newCapacity) bytes") }
            start = moved.assumingMemoryBound(to: UInt8.self)
        } else {
            guard let fresh = malloc(newCapacity) else { fatalError("out of memory for \(newCapacity) bytes") }
            fresh.copyMemory(from: start, byteCount: count)
            start = fresh.assumingMemoryBound(to: UInt8.self)
            isSpilled = true
        }
        capacity = newCapacity
    }

    /// An output writing into a buffer of its own, with room for `capacity` bytes to start with; free it
    /// with ``releaseSpill()``.
    @inlinable
    public init(ownedCapacity capacity: Int) {
        let capacity = Swift.max(capacity, 64)
        guard let buffer = malloc(capacity) else { fatalError("out of memory for \(capacity) bytes") }
        start = buffer.assumingMemoryBound(to: UInt8.self)
        self.capacity = capacity
        isSpilled = true
    }

    /// Appends one byte.
    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        reserve(1)
        appendUnchecked(byte)
    }

    /// Appends one byte; room for it must be reserved.
    @inlinable @inline(__always)
    public mutating func appendUnchecked(_ byte: UInt8) {
        start[count] = byte
        count &+= 1
    }

    /// Appends `value`, most significant byte first; room for it must be reserved.
    @inlinable @inline(__always)
    public mutating func appendUncheckedBigEndian<Value: FixedWidthInteger>(_ value: Value) {
        UnsafeMutableRawPointer(start + count).storeBytes(of: value.bigEndian, as: Value.self)
        count &+= MemoryLayout<Value>.size
    }

    /// Appends `bytes` with one copy.
    @inlinable @inline(__always)
    public mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        appendUnchecked(contentsOf: bytes)
    }

    /// Appends `bytes` with one copy; room for them must be reserved.
    @inlinable @inline(__always)
    public mutating func appendUnchecked(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        let length = bytes.count
        let source = UnsafeRawPointer(base)
        let target = UnsafeMutableRawPointer(start + count)
        if length <= 16 {
            // Short runs (keys, names) without a call to `memcpy`: two overlapping loads and stores.
            if length >= 8 {
                let head = source.loadUnaligned(as: UInt64.self)
                let tail = source.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
                target.storeBytes(of: head, as: UInt64.self)
                target.storeBytes(of: tail, toByteOffset: length - 8, as: UInt64.self)
            } else if length >= 4 {
                let head = source.loadUnaligned(as: UInt32.self)
                let tail = source.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
                target.storeBytes(of: head, as: UInt32.self)
                target.storeBytes(of: tail, toByteOffset: length - 4, as: UInt32.self)
            } else {
                for offset in 0..<length {
                    target.storeBytes(of: source.load(fromByteOffset: offset, as: UInt8.self), toByteOffset: offset, as: UInt8.self)
                }
            }
        } else {
            target.copyMemory(from: source, byteCount: length)
        }
        count &+= length
    }

    /// Appends the bytes of an ASCII literal.
    @inlinable @inline(__always)
    public mutating func append(_ literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// The byte at `offset` (below ``count``).
    @inlinable @inline(__always)
    public subscript(offset: Int) -> UInt8 {
        get { start[offset] }
        set { start[offset] = newValue }
    }

    /// Counts `extra` more bytes as written: those stored through the subscript past ``count``, into
    /// reserved room.
    @inlinable @inline(__always)
    public mutating func advance(by extra: Int) {
        count &+= extra
    }

    /// Forgets the bytes from `newCount` on.
    @inlinable @inline(__always)
    public mutating func truncate(to newCount: Int) {
        count = newCount
    }

    /// A copy of the bytes written, as an array.
    @inlinable
    public func copiedBytes() -> [UInt8] {
        Array(UnsafeBufferPointer(start: start, count: count))
    }

    /// Frees the spill buffer, if the bytes moved to one; the output is unusable afterwards.
    @inlinable
    public mutating func releaseSpill() {
        guard isSpilled else { return }
        free(start)
        isSpilled = false
        count = 0
        capacity = 0
    }

    /// The bytes `write` appends to an output sized for `capacity` bytes, as an array that was allocated
    /// once at that size (unless `write` wrote more), without a copy.
    /// - Throws: what `write` throws.
    @inlinable
    public static func bytes<Failure: Error>(
        capacity: Int, _ write: (inout ByteOutput) throws(Failure) -> Void
    ) throws(Failure) -> [UInt8] {
        var failure: Failure?
        var spilled: [UInt8]?
        let bytes = [UInt8](unsafeUninitializedCapacity: Swift.max(capacity, 1)) { buffer, initializedCount in
            var output = ByteOutput(start: buffer.baseAddress!, capacity: buffer.count)
            do throws(Failure) {
                try write(&output)
            } catch {
                failure = error
            }
            if output.isSpilled {
                if failure == nil { spilled = output.copiedBytes() }
                output.releaseSpill()
                initializedCount = 0
            } else {
                initializedCount = failure == nil ? output.count : 0
            }
        }
        if let failure { throw failure }
        return spilled ?? bytes
    }
}
