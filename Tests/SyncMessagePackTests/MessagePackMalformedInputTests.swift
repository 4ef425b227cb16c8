import Foundation
import SyncCore
import SyncMessagePack
import SyncTesting
import Testing

@Suite("MessagePack decoding refuses malformed input with the right code and offset")
struct MessagePackMalformedInputTests {
    let codec = MessagePackCodec()

    func error(_ hex: String, codec: MessagePackCodec = MessagePackCodec()) -> CodecError? {
        MessagePackTestSupport.decodingError(MessagePackTestSupport.bytes(hex), codec: codec)
    }

    @Test("empty input, the reserved byte 0xc1, trailing bytes")
    func framing() {
        #expect(error("")?.code == .malformedInput)
        #expect(error("c1")?.code == .malformedInput)
        #expect(error("c1")?.message.contains("0xc1") == true)
        #expect(error("9201c1")?.offset == 2)
        let trailing = error("c0c0")
        #expect(trailing?.code == .malformedInput)
        #expect(trailing?.offset == 1)
        #expect(error("9100 00")?.offset == 2)
    }

    @Test(
        "lengths and counts claiming 2^32 - 1 items against a small input are refused before any allocation",
        arguments: [
            "dbffffffff", "c6ffffffff", "ddffffffff", "dfffffffff", "c9ffffffffff", "dbffffffff616263",
            "ddffffffff01020304", "dfffffffffa16101", "daffff", "c5ffff", "dcffff", "deffff", "d9ff", "c4ff",
            "c7ffff", "bf", "9f", "8f", "8f a161", "8101",
        ])
    func hugeClaims(hex: String) {
        let failure = error(hex)
        #expect(failure?.code == .malformedInput, "\(hex): \(String(describing: failure))")
        #expect(failure?.offset == 0, "\(hex): \(String(describing: failure))")
    }

    @Test("a huge claim nested inside containers is refused at its own offset")
    func nestedHugeClaim() {
        let failure = error("9191 81a161 ddffffffff")
        #expect(failure?.code == .malformedInput)
        #expect(failure?.offset == 5)
        #expect(failure?.message.contains("4294967295") == true)
    }

    @Test("every truncation of values of every kind is malformed input")
    func truncations() throws {
        var values = RandomValues(seed: 11, features: codec.features, maxDepth: 3)
        for _ in 0..<300 {
            let bytes = try codec.encode(values.next())
            for length in 0..<bytes.count {
                let failure = MessagePackTestSupport.decodingError(Array(bytes[..<length]))
                #expect(failure?.code == .malformedInput, "\(MessagePackTestSupport.hex(bytes)) cut at \(length)")
            }
        }
    }

    @Test("random bytes decode or throw a CodecError with an offset inside the input")
    func randomBytes() {
        var generator = SeededGenerator(seed: 99)
        var decoded = 0
        for _ in 0..<50_000 {
            let input = (0..<Int.random(in: 0...32, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if let failure = MessagePackTestSupport.decodingError(input) {
                #expect(failure.code == .malformedInput || failure.code == .limitExceeded)
                #expect((failure.offset ?? 0) <= input.count)
            } else {
                decoded += 1
            }
        }
        #expect(decoded > 0)
    }

    @Test("nesting past the limit is refused, also far past it without exhausting the stack")
    func nesting() {
        let limited = MessagePackCodec(limits: CodecLimits(maxDepth: 4))
        #expect(error("91919191c0", codec: limited) == nil)
        #expect(error("91919190", codec: limited) == nil)
        #expect(error("91919180", codec: limited) == nil)
        let tooDeep = error("9191919191c0", codec: limited)
        #expect(tooDeep?.code == .limitExceeded)
        #expect(tooDeep?.offset == 4)
        #expect(error("9191919190", codec: limited)?.code == .limitExceeded)
        #expect(error("9191919180", codec: limited)?.code == .limitExceeded)
        let deepMap = error("919191 81a16180", codec: limited)
        #expect(deepMap?.code == .limitExceeded)
        #expect(deepMap?.offset == 6)
        let deep = [UInt8](repeating: 0x91, count: 1_000_000) + [0xc0]
        #expect(MessagePackTestSupport.decodingError(deep)?.code == .limitExceeded)
        let deepMaps = [UInt8]([0x81, 0xa1, 0x61]).repeated(300_000) + [0xc0]
        #expect(MessagePackTestSupport.decodingError(deepMaps)?.code == .limitExceeded)
    }

    @Test(
        "str bytes that are not UTF-8 are refused, in values and in keys",
        arguments: [
            "a1ff", "a1c0", "a2c080", "a3eda080", "a3edbfbf", "a1c3", "a2e4b8", "a4f4908080", "a4f8888080",
            "a180", "d901fe", "81a1ff01", "82a161 01 a2c0af 02",
        ])
    func invalidUTF8(hex: String) {
        let failure = error(hex)
        #expect(failure?.code == .malformedInput, "\(hex): \(String(describing: failure))")
        #expect(failure?.message.contains("UTF-8") == true, "\(hex): \(String(describing: failure))")
    }

    @Test(
        "timestamps of a bad size or with 10^9 nanoseconds or more are refused",
        arguments: [
            ("d4ff00", "must be 4, 8 or 12"), ("d5ff0000", "must be 4, 8 or 12"), ("d8ff00000000000000000000000000000000", "must be 4, 8 or 12"),
            ("c700ff", "must be 4, 8 or 12"), ("c705ff0000000000", "must be 4, 8 or 12"), ("c710ff00000000000000000000000000000000", "must be 4, 8 or 12"),
            ("c80004ff00000001", nil), ("c90000000cff000000000000000000000000", nil),
            ("d7ffee6b280000000000", "nanoseconds"), ("d7fffffffffc00000000", "nanoseconds"),
            ("c70cff3b9aca000000000000000000", "nanoseconds"), ("c70cffffffffff0000000000000000", "nanoseconds"),
        ] as [(String, String?)])
    func badTimestamps(hex: String, problem: String?) {
        let failure = error(hex)
        if let problem {
            #expect(failure?.code == .malformedInput, "\(hex): \(String(describing: failure))")
            #expect(failure?.message.contains(problem) == true, "\(hex): \(String(describing: failure))")
        } else {
            #expect(failure == nil, "\(hex) is a valid timestamp in a longer ext form: \(String(describing: failure))")
        }
    }

    @Test("timestamps beyond ±2^52 seconds are past the range of dates")
    func timestampRange() {
        #expect(error("c70cff000000007fffffffffffffff")?.code == .limitExceeded)
        #expect(error("c70cff000000008000000000000000")?.code == .limitExceeded)
        #expect(error("c70cff000000000010000000000000") == nil)
        #expect(error("c70cff000000000010000000000001")?.code == .limitExceeded)
        #expect(error("c70cff00000000fff0000000000000") == nil)
        // 2^52 s and 0.75 s round to 2^52 + 1 s as a Date: past the range, so refused rather than unwritable.
        #expect(error("c70cff2cb417800010000000000000")?.code == .limitExceeded)
        // Every fraction at the edge is either refused or read as a date that can be written again.
        for nanoseconds in ["00000001", "1dcd6500", "3b9ac9ff"] {
            let codec = MessagePackCodec()
            switch Result(catching: { try codec.decode(MessagePackTestSupport.bytes("c70cff\(nanoseconds)0010000000000000")) }) {
            case .success(let date): #expect((try? codec.encode(date)) != nil, "\(nanoseconds) ns read but not written")
            case .failure(let failure): #expect((failure as? CodecError)?.code == .limitExceeded)
            }
        }
    }

    @Test("extension types other than the timestamp are refused", arguments: ["d40100", "d5050000", "c70001", "d6fe00000000", "c7017f00"])
    func otherExtensions(hex: String) {
        let failure = error(hex)
        #expect(failure?.code == .malformedInput)
        #expect(failure?.message.contains("extension type") == true, "\(hex): \(String(describing: failure))")
    }

    @Test(
        "map keys that are not str are refused",
        arguments: [
            ("8101c0", "an integer"), ("81c0c0", "nil"), ("81c3c0", "a bool"), ("81cb3ff0000000000000c0", "a float"),
            ("81c40161c0", "a bin"), ("819001", "an array"), ("818001", "a map"), ("81d6ff0000000001", "a timestamp"),
            ("82a16101 02 03", "an integer"),
        ])
    func nonStringKeys(hex: String, kind: String) {
        let failure = error(hex)
        #expect(failure?.code == .malformedInput)
        #expect(failure?.message.contains("a map key is \(kind)") == true, "\(hex): \(String(describing: failure))")
    }

    @Test("a key that appears twice in one map is refused at its second occurrence")
    func duplicateKeys() {
        let failure = error("83a16101a16202a16103")
        #expect(failure?.code == .malformedInput)
        #expect(failure?.offset == 7)
        #expect(failure?.message.contains("twice") == true)
        // Canonically equivalent spellings are the same Swift string, hence the same key.
        #expect(error("82a2c3a901a365cc8102")?.code == .malformedInput)
        // The same key in different maps is fine.
        #expect(error("92 81a16101 81a16102") == nil)
    }

    @Test("the input size and value count limits")
    func sizeAndCountLimits() throws {
        let small = MessagePackCodec(limits: CodecLimits(maxInputBytes: 4, maxElementCount: 3))
        #expect(error("92c0c0", codec: small) == nil)
        let tooMany = error("93c0c0c0", codec: small)
        #expect(tooMany?.code == .limitExceeded)
        #expect(tooMany?.offset == 3)
        #expect(error("a461626364", codec: small)?.code == .limitExceeded)
        // Map keys are not counted as values.
        #expect(error("82a161c0a162c0", codec: MessagePackCodec(limits: CodecLimits(maxElementCount: 3))) == nil)
    }
}

extension Array {
    /// The array repeated `count` times.
    fileprivate func repeated(_ count: Int) -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(self.count * count)
        for _ in 0..<count { result += self }
        return result
    }
}
