/// The text of the scalar element being read (`<string>`, `<key>`, …): the
/// character-data runs libxml2 reports, appended into one reusable buffer
/// (for `<data>`, the bytes its base64 decodes to).
struct PlistTextBuffer: ~Copyable {
    // Bytes `0..<count` are initialized; the buffer only grows and is reused for every element.
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// How many bytes the buffer holds.
    private(set) var count = 0

    /// An empty buffer with room for `capacity` bytes before it grows.
    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Appends `bytes`.
    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity { grow(toHold: count + bytes.count) }
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends one byte.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: count + 1) }
        base[count] = byte
        count += 1
    }

    /// Lets `write` append at most `maxCount` bytes at the end, returning how many it wrote.
    @inline(__always)
    mutating func append(upTo maxCount: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Int) {
        if count + maxCount > capacity { grow(toHold: count + maxCount) }
        let written = write(base + count)
        precondition(written >= 0 && written <= maxCount)
        count += written
    }

    /// Empties the buffer, keeping its memory.
    @inline(__always)
    mutating func removeAll() { count = 0 }

    /// Calls `body` with the bytes held; the pointer is valid only during the call.
    @inline(__always)
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws(Never) -> Result) -> Result {
        body(UnsafeBufferPointer(start: base, count: count))
    }

    private mutating func grow(toHold needed: Int) {
        var larger = capacity * 2
        while larger < needed { larger *= 2 }
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }
}
