/// Builds `bplist00` files object by object, with every part of the trailer
/// and offset table open to tampering, for tests of the reader's checks.
///
/// ```swift
/// var file = CraftedPlist(objects: [[0xA1, 0x00]])   // an array that holds itself
/// file.bytes   // header, objects, offset table, trailer
/// ```
struct CraftedPlist {
    /// The objects' bytes, in object-number order.
    var objects: [[UInt8]]
    /// The size of an offset table entry.
    var offsetSize = 1
    /// The size of an object reference (as written in the trailer; the objects hold their own references).
    var referenceSize = 1
    /// The top object's number.
    var topObject: UInt64 = 0
    /// A different object count to write in the trailer.
    var objectCountOverride: UInt64?
    /// A different offset table start to write in the trailer.
    var offsetTableStartOverride: UInt64?
    /// Different offsets to write in the offset table, by object number.
    var offsetOverrides: [Int: UInt64] = [:]
    /// The header to write.
    var header: [UInt8] = Array("bplist00".utf8)
    /// Bytes inserted between the offset table and the trailer.
    var gapBeforeTrailer: [UInt8] = []

    init(objects: [[UInt8]]) { self.objects = objects }

    /// The whole file.
    var bytes: [UInt8] {
        var file = header
        var offsets: [UInt64] = []
        for object in objects {
            offsets.append(UInt64(file.count))
            file += object
        }
        let tableStart = UInt64(file.count)
        for (number, offset) in offsets.enumerated() {
            file += Self.bigEndian(offsetOverrides[number] ?? offset, size: offsetSize)
        }
        file += gapBeforeTrailer
        file += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        file += Self.bigEndian(objectCountOverride ?? UInt64(objects.count), size: 8)
        file += Self.bigEndian(topObject, size: 8)
        file += Self.bigEndian(offsetTableStartOverride ?? tableStart, size: 8)
        return file
    }

    /// The low `size` bytes of `value`, most significant first.
    static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> UInt64($0 * 8)) }
    }

    /// An ASCII string object.
    static func ascii(_ text: String) -> [UInt8] {
        precondition(text.utf8.count < 15)
        return [0x50 | UInt8(text.utf8.count)] + Array(text.utf8)
    }

    /// A one-byte integer object.
    static func int8(_ value: UInt8) -> [UInt8] { [0x10, value] }
}
