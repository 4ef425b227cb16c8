/// The constants of the `bplist00` format: the header, the trailer layout and
/// the object markers (the high nibble of an object's first byte names its
/// type, the low nibble holds a size or a count).
enum BinaryPlistFormat {
    /// `bplist00`, the eight bytes every binary property list starts with.
    static let header: [UInt8] = Array("bplist00".utf8)
    /// The size of the trailer at the end of the file.
    static let trailerSize = 32
    /// The smallest file: header, a one-byte object, a one-byte offset table and the trailer.
    static let minimumSize = 8 + 1 + 1 + 32

    /// `false`.
    static let falseMarker: UInt8 = 0x08
    /// `true`.
    static let trueMarker: UInt8 = 0x09
    /// A big-endian integer of `1 << low nibble` bytes.
    static let integerNibble: UInt8 = 0x1
    /// A big-endian IEEE 754 real of `1 << low nibble` bytes (4 or 8).
    static let realNibble: UInt8 = 0x2
    /// A date: a big-endian Float64 of seconds since 2001-01-01 00:00:00 UTC.
    static let dateMarker: UInt8 = 0x33
    /// Raw bytes; the low nibble is the count (or 0xF and an integer object follows).
    static let dataNibble: UInt8 = 0x4
    /// An ASCII string; the count is in bytes.
    static let asciiStringNibble: UInt8 = 0x5
    /// A UTF-16BE string; the count is in UTF-16 code units.
    static let utf16StringNibble: UInt8 = 0x6
    /// A UID (keyed-archiver object reference) of `low nibble + 1` bytes.
    static let uidNibble: UInt8 = 0x8
    /// An array: `count` object references.
    static let arrayNibble: UInt8 = 0xA
    /// A dictionary: `count` key references, then `count` value references.
    static let dictionaryNibble: UInt8 = 0xD
    /// The low nibble meaning "the count follows as an integer object".
    static let extendedCount: UInt8 = 0xF

    /// The dictionary key Foundation and this codec use for a UID: `["CF$UID": n]`.
    static let uidKey = "CF$UID"
}
