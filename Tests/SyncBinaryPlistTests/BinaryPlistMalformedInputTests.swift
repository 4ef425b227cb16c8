import SyncBinaryPlist
import SyncCore
import SyncTesting
import Testing

@Suite("Binary plist malformed input")
struct BinaryPlistMalformedInputTests {
    let codec = BinaryPlistCodec()
    let verifier = CodecVerifier(codec: BinaryPlistCodec())

    /// The error decoding `bytes` throws, or `nil` when it decodes.
    private func error(_ bytes: [UInt8], codec: BinaryPlistCodec = BinaryPlistCodec()) -> CodecError? {
        do {
            _ = try codec.decode(bytes)
            return nil
        } catch {
            return error
        }
    }

    private func expectMalformed(_ file: CraftedPlist, mentioning words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let failure = error(file.bytes)
        #expect(failure?.code == .malformedInput, "\(String(describing: failure))", sourceLocation: sourceLocation)
        #expect(failure?.message.contains(words) == true, "\(String(describing: failure))", sourceLocation: sourceLocation)
    }

    // MARK: Header and trailer

    @Test("too short, empty, or without the bplist00 header")
    func header() {
        #expect(error([])?.code == .malformedInput)
        #expect(error(Array("bplist00".utf8))?.code == .malformedInput)
        var file = CraftedPlist(objects: [[0x09]])
        file.header = Array("bplist01".utf8)
        expectMalformed(file, mentioning: "header")
        file.header = Array("<?xml ve".utf8)
        expectMalformed(file, mentioning: "header")
    }

    @Test("a bad trailer: sizes outside 1 to 8, no objects, a top object past the end")
    func badTrailerFields() {
        let valid = CraftedPlist(objects: [[0x09]]).bytes
        for size: UInt8 in [0, 9, 255] {
            var bytes = valid
            bytes[bytes.count - 26] = size
            let offsetFailure = error(bytes)
            #expect(offsetFailure?.message.contains("offset size") == true, "\(String(describing: offsetFailure))")
            bytes = valid
            bytes[bytes.count - 25] = size
            let referenceFailure = error(bytes)
            #expect(referenceFailure?.message.contains("reference size") == true, "\(String(describing: referenceFailure))")
        }
        var none = CraftedPlist(objects: [[0x09]])
        none.objectCountOverride = 0
        expectMalformed(none, mentioning: "no objects")
        var top = CraftedPlist(objects: [[0x09]])
        top.topObject = 1
        expectMalformed(top, mentioning: "top object")
        top.topObject = UInt64.max
        expectMalformed(top, mentioning: "top object")
    }

    @Test("an offset table that is misplaced or does not fill the space before the trailer")
    func badOffsetTable() {
        for start: UInt64 in [0, 8, 7, 1 << 40, UInt64.max] {
            var file = CraftedPlist(objects: [[0x09]])
            file.offsetTableStartOverride = start
            expectMalformed(file, mentioning: "offset table")
        }
        var gap = CraftedPlist(objects: [[0x09]])
        gap.gapBeforeTrailer = [0]
        expectMalformed(gap, mentioning: "does not fill")
        var many = CraftedPlist(objects: [[0x09]])
        many.objectCountOverride = 2
        expectMalformed(many, mentioning: "does not fill")
        many.objectCountOverride = UInt64.max
        expectMalformed(many, mentioning: "does not fill")
        var huge = CraftedPlist(objects: [[0x09]])
        huge.offsetSize = 8
        huge.objectCountOverride = 1 << 61
        expectMalformed(huge, mentioning: "does not fill")
    }

    @Test("an offset size too small to hold the offset table's start, as Apple's reader requires")
    func offsetSizeTooSmall() {
        var file = CraftedPlist(objects: [[0x4F, 0x11, 0x01, 0x00] + Array(repeating: 0, count: 256)])
        expectMalformed(file, mentioning: "does not fit the offset size")
        file.offsetSize = 2
        #expect(error(file.bytes) == nil)
    }

    @Test("more objects than the reference size can name")
    func referenceSizeTooSmall() {
        var file = CraftedPlist(objects: Array(repeating: [0x09], count: 257))
        file.offsetSize = 2
        expectMalformed(file, mentioning: "cannot be referred to")
    }

    // MARK: Offsets and references

    @Test("offsets outside the object area", arguments: [UInt64(0), 7, 10, 11, 40, 1 << 32, UInt64.max])
    func offsetsOutOfRange(offset: UInt64) {
        var file = CraftedPlist(objects: [[0x51, 0x61]])
        file.offsetSize = 8
        file.offsetOverrides = [0: offset]
        expectMalformed(file, mentioning: "outside the object area")
    }

    @Test("a reference past the last object")
    func referencesOutOfRange() {
        expectMalformed(CraftedPlist(objects: [[0xA1, 0x01]]), mentioning: "past the last")
        expectMalformed(CraftedPlist(objects: [[0xA1, 0xFF]]), mentioning: "past the last")
        expectMalformed(CraftedPlist(objects: [[0xD1, 0x05, 0x01], [0x09]]), mentioning: "past the last")
        expectMalformed(CraftedPlist(objects: [[0xD1, 0x01, 0x05], [0x51, 0x61]]), mentioning: "past the last")
    }

    // MARK: Cycles

    @Test("an array or dictionary that contains itself, directly or through others")
    func cycles() {
        expectMalformed(CraftedPlist(objects: [[0xA1, 0x00]]), mentioning: "cycle")
        expectMalformed(CraftedPlist(objects: [[0xA1, 0x01], [0xA1, 0x00]]), mentioning: "cycle")
        expectMalformed(CraftedPlist(objects: [[0xD1, 0x01, 0x02], [0x51, 0x6B], [0xA2, 0x01, 0x00]]), mentioning: "cycle")
        var deep = CraftedPlist(objects: [[0xA1, 0x01], [0xA1, 0x02], [0xA1, 0x03], [0xA1, 0x01]])
        deep.topObject = 0
        expectMalformed(deep, mentioning: "cycle")
    }

    // MARK: Lengths

    @Test("counts claiming more bytes than remain are refused without allocating")
    func hugeCounts() {
        let huge: [UInt8] = [0x13, 0x10, 0, 0, 0, 0, 0, 0, 0]  // 2^60
        let max: [UInt8] = [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        for marker: UInt8 in [0x4F, 0x5F, 0x6F, 0xAF, 0xDF] {
            expectMalformed(CraftedPlist(objects: [[marker] + huge + [0, 0]]), mentioning: "claims")
            expectMalformed(CraftedPlist(objects: [[marker] + max + [0, 0]]), mentioning: "claims")
            expectMalformed(CraftedPlist(objects: [[marker, 0x12, 0x7F, 0xFF, 0xFF, 0xFF]]), mentioning: "claims")
        }
        // A count in the nibble that is one past what remains.
        expectMalformed(CraftedPlist(objects: [[0x43, 1, 2]]), mentioning: "claims")
        expectMalformed(CraftedPlist(objects: [[0x62, 0, 0x61, 0]]), mentioning: "claims")
        expectMalformed(CraftedPlist(objects: [[0xD1, 0x00]]), mentioning: "claims")
    }

    @Test("a count that is not a 1- to 8-byte integer, or runs past the object area")
    func badCountMarkers() {
        expectMalformed(CraftedPlist(objects: [[0x4F, 0x22, 0, 0, 0, 1]]), mentioning: "not an integer")
        expectMalformed(CraftedPlist(objects: [[0x4F, 0x14] + Array(repeating: 0, count: 16)]), mentioning: "not an integer")
        expectMalformed(CraftedPlist(objects: [[0x4F]]), mentioning: "count runs past")
        expectMalformed(CraftedPlist(objects: [[0x4F, 0x12, 0, 0]]), mentioning: "runs past the object area")
    }

    @Test("scalars that run past the object area")
    func truncatedScalars() {
        expectMalformed(CraftedPlist(objects: [[0x13, 0, 0, 0]]), mentioning: "runs past")
        expectMalformed(CraftedPlist(objects: [[0x14] + Array(repeating: 0, count: 12)]), mentioning: "runs past")
        expectMalformed(CraftedPlist(objects: [[0x23, 0, 0]]), mentioning: "runs past")
        expectMalformed(CraftedPlist(objects: [[0x33, 0, 0, 0, 0, 0, 0, 0]]), mentioning: "runs past")
        expectMalformed(CraftedPlist(objects: [[0x83, 0, 0]]), mentioning: "runs past")
    }

    // MARK: Object types

    @Test("null, fill, sets and unknown markers are refused", arguments: [
        UInt8(0x00), 0x0F, 0x0C, 0x0E, 0x15, 0x1F, 0x21, 0x24, 0x30, 0x32, 0x34, 0x70, 0x88, 0x90, 0xB0, 0xC1, 0xE0, 0xF0,
    ])
    func refusedMarkers(marker: UInt8) {
        let failure = error(CraftedPlist(objects: [[marker] + Array(repeating: 0, count: 16)]).bytes)
        #expect(failure?.code == .malformedInput)
        #expect(failure?.offset == 8)
    }

    @Test("the null object plistlib writes for None is refused, as Apple's readers do")
    func nullFromPlistlib() {
        let failure = error(CraftedPlist(objects: [[0xA1, 0x01], [0x00]]).bytes)
        #expect(failure?.code == .malformedInput)
        #expect(failure?.message.contains("null") == true)
    }

    @Test("dictionary keys that are not strings")
    func nonStringKeys() {
        for key: [UInt8] in [[0x10, 0x01], [0x09], [0x41, 0x61], [0xA0], [0x80, 0x01], [0x23, 0, 0, 0, 0, 0, 0, 0, 0]] {
            expectMalformed(CraftedPlist(objects: [[0xD1, 0x01, 0x01], key]), mentioning: "not a string")
        }
    }

    @Test("duplicate keys, byte for byte or canonically equivalent")
    func duplicateKeys() {
        expectMalformed(CraftedPlist(objects: [[0xD2, 0x01, 0x01, 0x02, 0x02], [0x51, 0x61], [0x09]]), mentioning: "twice")
        expectMalformed(
            CraftedPlist(objects: [[0xD2, 0x01, 0x02, 0x03, 0x03], [0x51, 0x61], [0x61, 0x00, 0x61], [0x09]]),
            mentioning: "twice")
        // "é" precomposed and "e" + combining acute are the same Swift string
        expectMalformed(
            CraftedPlist(objects: [[0xD2, 0x01, 0x02, 0x03, 0x03], [0x61, 0x00, 0xE9], [0x62, 0x00, 0x65, 0x03, 0x01], [0x09]]),
            mentioning: "twice")
    }

    @Test("an ASCII string with a byte above 0x7F")
    func nonASCIIInASCIIString() {
        expectMalformed(CraftedPlist(objects: [[0x52, 0x61, 0xE9]]), mentioning: "ASCII")
        expectMalformed(CraftedPlist(objects: [[0x52, 0xC3, 0xA9]]), mentioning: "ASCII")
    }

    @Test("UTF-16 strings with unpaired surrogates", arguments: [
        [UInt8(0x61), 0xD8, 0x3D], [0x61, 0xDE, 0x00], [0x62, 0xD8, 0x3D, 0x00, 0x61], [0x62, 0xDE, 0x00, 0xD8, 0x3D],
        [0x62, 0xD8, 0x3D, 0xD8, 0x3D],
    ])
    func unpairedSurrogates(object: [UInt8]) {
        expectMalformed(CraftedPlist(objects: [object]), mentioning: "surrogate")
    }

    @Test("16-byte integers outside -2^63 to 2^64-1 are past the codec's limit")
    func hugeIntegers() {
        for high: [UInt8] in [[0, 0, 0, 0, 0, 0, 0, 1], [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x80, 0, 0, 0, 0, 0, 0, 0]] {
            let failure = error(CraftedPlist(objects: [[0x14] + high + Array(repeating: 0, count: 8)]).bytes)
            #expect(failure?.code == .limitExceeded)
        }
        // all-ones high half with a low half that is not negative as an Int64
        let failure = error(CraftedPlist(objects: [[0x14] + Array(repeating: 0xFF, count: 8) + Array(repeating: 0, count: 8)]).bytes)
        #expect(failure?.code == .limitExceeded)
    }

    // MARK: Limits

    @Test("input larger than the size limit")
    func sizeLimit() throws {
        let bytes = try codec.encode(.data(Array(repeating: 1, count: 100)))
        #expect(error(bytes, codec: BinaryPlistCodec(limits: CodecLimits(maxInputBytes: 100)))?.code == .limitExceeded)
        #expect(error(bytes, codec: BinaryPlistCodec(limits: CodecLimits(maxInputBytes: bytes.count))) == nil)
    }

    @Test("more values than the element limit, counted per reference")
    func elementLimit() throws {
        let bytes = try codec.encode(.array(Array(repeating: "same", count: 100)))
        #expect(error(bytes, codec: BinaryPlistCodec(limits: CodecLimits(maxElementCount: 100)))?.code == .limitExceeded)
        #expect(error(bytes, codec: BinaryPlistCodec(limits: CodecLimits(maxElementCount: 101))) == nil)
        let dictionary = try codec.encode(["a": 1, "b": 2])
        #expect(error(dictionary, codec: BinaryPlistCodec(limits: CodecLimits(maxElementCount: 4)))?.code == .limitExceeded)
        #expect(error(dictionary, codec: BinaryPlistCodec(limits: CodecLimits(maxElementCount: 5))) == nil)
    }

    @Test("a small file whose shared containers would expand to 2^60 values stops at the element limit")
    func expansionBomb() {
        // object i is an array holding object i+1 twice; the last is an empty array
        var objects: [[UInt8]] = (0..<60).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] }
        objects.append([0xA0])
        let failure = error(CraftedPlist(objects: objects).bytes, codec: BinaryPlistCodec(limits: CodecLimits(maxElementCount: 100_000)))
        #expect(failure?.code == .limitExceeded)
    }

    @Test("nesting past the depth limit, in crafted files too")
    func nesting() throws {
        try CodecVerifier(codec: BinaryPlistCodec(limits: CodecLimits(maxDepth: 3)))
            .verifyDepthLimit(encodingWith: codec)
        let objects: [[UInt8]] = (0..<300).map { $0 == 299 ? [0xA0] : [0xA1] + CraftedPlist.bigEndian(UInt64($0 + 1), size: 2) }
        var file = CraftedPlist(objects: objects)
        file.referenceSize = 2
        file.offsetSize = 2
        try verifier.verifyRejected(file.bytes, with: .limitExceeded)
    }

    @Test("errors say where: the offset of the problem")
    func offsets() {
        let failure = error(CraftedPlist(objects: [[0x09], [0xA1, 0x05]]).bytes.withTop(1))
        #expect(failure?.offset == 10)
        #expect(failure.map { "\($0)" }?.contains("at byte 10") == true)
    }
}

extension [UInt8] {
    /// The same file with the trailer's top object set to `object`.
    fileprivate func withTop(_ object: UInt64) -> [UInt8] {
        var bytes = self
        bytes.replaceSubrange(count - 16..<count - 8, with: CraftedPlist.bigEndian(object, size: 8))
        return bytes
    }
}
