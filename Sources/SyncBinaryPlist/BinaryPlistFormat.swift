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
    /// A date: a big-endian Float64 of seconds since 2001-01-01 00:00:00 UTC.
    static let dateMarker: UInt8 = 0x33
    /// The low nibble meaning "the count follows as an integer object".
    static let extendedCount: UInt8 = 0xF

    /// The type of an object: the high nibble of its marker.
    enum ObjectType: UInt8 {
        /// An object of one byte: null (0x00), ``BinaryPlistFormat/falseMarker``,
        /// ``BinaryPlistFormat/trueMarker``, fill.
        case singleByte = 0x0
        /// A big-endian integer of `1 << low nibble` bytes.
        case integer = 0x1
        /// A big-endian IEEE 754 real of `1 << low nibble` bytes (4 or 8).
        case real = 0x2
        /// A date; its one marker is ``BinaryPlistFormat/dateMarker``.
        case date = 0x3
        /// Raw bytes; the low nibble is the count (or 0xF and an integer object follows).
        case data = 0x4
        /// An ASCII string; the count is in bytes.
        case asciiString = 0x5
        /// A UTF-16BE string; the count is in UTF-16 code units.
        case utf16String = 0x6
        /// A UID (keyed-archiver object reference) of `low nibble + 1` bytes.
        case uid = 0x8
        /// An array: `count` object references.
        case array = 0xA
        /// A dictionary: `count` key references, then `count` value references.
        case dictionary = 0xD

        /// The type `marker` names; `nil` when its high nibble names no type this codec knows.
        init?(marker: UInt8) { self.init(rawValue: marker >> 4) }

        /// The marker of an object of this type whose low nibble (a size or a count) is `low`.
        func marker(low: UInt8) -> UInt8 { rawValue << 4 | low }
    }

    /// The dictionary key Foundation and this codec use for a UID: `["CF$UID": n]`.
    static let uidKey = "CF$UID"
}
