/// A dictionary key read from a document, with a fingerprint of its bytes.
struct PlistKey {
    /// The key.
    var string: String
    /// For an ASCII key, a hash of its bytes with the lowest bit set; 0 for any other key.
    /// Two ASCII strings are equal only when their bytes are, so two keys whose fingerprints
    /// are both nonzero and differ are known to differ without comparing them. Other keys
    /// must be compared as strings: Swift compares strings by canonical equivalence, under
    /// which different bytes can be equal ("é" and "e\u{301}", or "K" and the Kelvin sign).
    var fingerprint: UInt64

    /// Whether the two keys are known to differ from their fingerprints alone.
    @inline(__always)
    func surelyDiffers(from other: PlistKey) -> Bool {
        fingerprint != other.fingerprint && fingerprint != 0 && other.fingerprint != 0
    }
}

/// The strings of recently read dictionary keys, by their bytes: the same few
/// keys repeat in every record of a document, and a key found here is neither
/// validated as UTF-8 nor made again.
///
/// A small direct-mapped table of keys up to 16 bytes; a longer key, or one
/// that misses, is made from its bytes and (when short) replaces the entry in its slot.
struct PlistKeyCache: ~Copyable {
    private struct Entry {
        /// The key's bytes, as `words(of:)` packs them: the first word.
        var low: UInt64 = 0
        /// The second word.
        var high: UInt64 = 0
        /// The key's length in bytes; -1 for an empty slot.
        var length = -1
        /// The key those bytes make.
        var key = PlistKey(string: "", fingerprint: 0)
    }

    private static let slotBits = 6
    private static let slotCount = 1 << slotBits
    private static let longestCachedKey = 16
    // `slotCount` initialized entries, owned here.
    private let entries: UnsafeMutablePointer<Entry>

    /// An empty cache.
    init() {
        entries = .allocate(capacity: Self.slotCount)
        entries.initialize(repeating: Entry(), count: Self.slotCount)
    }

    deinit {
        entries.deinitialize(count: Self.slotCount)
        entries.deallocate()
    }

    /// The key whose UTF-8 bytes are `bytes`.
    mutating func key(for bytes: UnsafeBufferPointer<UInt8>) -> PlistKey {
        guard bytes.count <= Self.longestCachedKey else {
            return PlistKey(string: String(decoding: bytes, as: UTF8.self), fingerprint: Self.fingerprint(of: bytes))
        }
        let (low, high) = Self.words(of: bytes)
        let hash = Self.mix(low, high, count: bytes.count)
        let slot = entries + Int(truncatingIfNeeded: hash >> (64 - UInt64(Self.slotBits)))  // 0..<slotCount
        if slot.pointee.length == bytes.count, slot.pointee.low == low, slot.pointee.high == high {
            return slot.pointee.key
        }
        let isASCII = (low | high) & 0x8080_8080_8080_8080 == 0  // `words(of:)` keeps every byte's top bit
        let key = PlistKey(string: String(decoding: bytes, as: UTF8.self), fingerprint: isASCII ? hash | 1 : 0)
        slot.pointee = Entry(low: low, high: high, length: bytes.count, key: key)
        return key
    }

    /// Two words that, with the length, tell apart any two byte strings of up to 16
    /// bytes: overlapping loads that together cover every byte and read none outside.
    @inline(__always)
    private static func words(of bytes: UnsafeBufferPointer<UInt8>) -> (low: UInt64, high: UInt64) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return (0, 0) }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        switch count {
        case 8...:
            return (
                UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)),
                UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            )
        case 4..<8:
            let first = UInt64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
            let last = UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)))
            return (first | last << 32, 0)
        default:
            return (UInt64(base[0]) | UInt64(base[count / 2]) << 8 | UInt64(base[count - 1]) << 16, 0)
        }
    }

    /// The fingerprint (see ``PlistKey/fingerprint``) of a key of any length: its bytes, 16 at a time, mixed.
    private static func fingerprint(of bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0
        var topBits: UInt64 = 0
        var start = 0
        while start < bytes.count {
            let end = min(start + longestCachedKey, bytes.count)
            let (low, high) = words(of: UnsafeBufferPointer(rebasing: bytes[start..<end]))
            topBits |= (low | high) & 0x8080_8080_8080_8080
            hash = mix(low ^ hash, high, count: bytes.count)
            start = end
        }
        return topBits == 0 ? hash | 1 : 0
    }

    /// Mixes up to 16 bytes and a length into 64 well-spread bits.
    @inline(__always)
    private static func mix(_ low: UInt64, _ high: UInt64, count: Int) -> UInt64 {
        (low ^ (high &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(truncatingIfNeeded: count)) &* 0xBF58_476D_1CE4_E5B9
    }
}
