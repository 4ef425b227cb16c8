import Foundation
import SyncCore
import SyncMessagePack
import SyncTesting
import TestSupport
import Testing

@Suite(
    "MessagePack interop with Python's msgpack package",
    .enabled("python3 with the msgpack package is not installed (scripts/install-deps.sh --python installs it)") { await PythonMsgPack.python.isAvailable() })
struct MessagePackPythonInteropTests {
    let codec = MessagePackCodec()

    /// Values written by us, to be read by Python.
    static let writtenCorpus: [SyncValue] = [
        MessagePackTestSupport.nestedSample,
        .null, true, false, 0, 1, 127, 128, 255, 256, 65_535, 65_536, 4_294_967_295, 4_294_967_296,
        -1, -32, -33, -128, -129, -32_768, -32_769, -2_147_483_648, -2_147_483_649,
        .integer(.max), .integer(.min), .unsignedInteger(UInt64(Int64.max) + 1), .unsignedInteger(.max),
        0.0, .real(-0.0), 1.5, 0.1, .real(.pi), .real(.leastNonzeroMagnitude), .real(.greatestFiniteMagnitude),
        .real(.infinity), .real(-.infinity), .real(.nan),
        "", "é ß 中文 😀 𝄞 \u{10FFFF} \u{FFFF} \u{FEFF} \u{0}", .string(String(repeating: "a", count: 31)),
        .string(String(repeating: "a", count: 32)), .string(String(repeating: "é", count: 200)),
        .string(String(repeating: "z", count: 65_536)),
        .data([]), .data([0, 1, 255]), .data(Array(repeating: 9, count: 256)), .data(Array(repeating: 1, count: 65_536)),
        .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: 1_714_566_600)),
        .date(Date(timeIntervalSince1970: 4_294_967_295)), .date(Date(timeIntervalSince1970: 4_294_967_296)),
        .date(Date(timeIntervalSince1970: 0.5)), .date(Date(timeIntervalSince1970: -1)),
        .date(Date(timeIntervalSince1970: -0.25)), .date(Date(timeIntervalSince1970: 17_179_869_184)),
        .date(Date(timeIntervalSince1970: -2_208_988_800)), .date(Date(timeIntervalSince1970: 253_402_300_799)),
        .date(Date(timeIntervalSince1970: -62_135_596_800)), .date(Date(timeIntervalSinceReferenceDate: 0.123456789)),
        .date(Date(timeIntervalSinceReferenceDate: 737_000_000.001)), .date(.distantPast), .date(.distantFuture),
        [], [:], [[[[]]]], ["": ""], ["b": 1, "a": 2, "é": 3, "e": 4, "😀": 5, "\u{FFFF}": 6, "Z": 7],
        .array((0..<16).map { .integer(Int64($0)) }), .array((0..<65_536).map { .integer(Int64($0)) }),
        .dictionary(Dictionary(uniqueKeysWithValues: (0..<16).map { (String($0), SyncValue.integer(Int64($0))) })),
        .dictionary(Dictionary(uniqueKeysWithValues: (0..<65_536).map { (String($0), SyncValue.null) })),
    ]

    @Test("the Python check notices a value, a kind, a real's sign or a date that differs")
    func checkNoticesDisagreement() async throws {
        let pairs: [(SyncValue, SyncValue)] = [
            (1, 2), (1, 1.0), (.real(0.0), .real(-0.0)), ("é", "e"), (.data([1]), .data([2])), (.data([]), ""),
            (.date(Date(timeIntervalSince1970: 1)), .date(Date(timeIntervalSince1970: 2))), (["a": 1], ["b": 1]),
        ]
        let report = try await PythonMsgPack.check(
            pairs.map { .init(bytes: try codec.encode($0.0), canonical: MessagePackCanonicalForm.of($0.1)) })
        #expect(report.agreed == 0)
        #expect(report.disagreements.count == pairs.count)
    }

    @Test("Python reads the fixed corpus we write as the same values")
    func pythonReadsOurCorpus() async throws {
        try await expectPythonReads(Self.writtenCorpus)
    }

    @Test("Python reads 10,000 random values we write as the same values", arguments: [UInt64(3), 20_240_502])
    func pythonReadsOurRandomValues(seed: UInt64) async throws {
        var values = RandomValues(seed: seed, features: codec.features)
        try await expectPythonReads((0..<10_000).map { _ in values.next() })
    }

    @Test("our bytes are exactly what msgpack.packb writes, with keys in UTF-8 order")
    func sameBytesAsPython() async throws {
        var values = RandomValues(seed: 8, features: codec.features)
        let all = Self.writtenCorpus + (0..<5_000).map { _ in values.next() }
        let ours = try all.map { try codec.encode($0) }
        let theirs = try await PythonMsgPack.pack(all.map(MessagePackCanonicalForm.of))
        try #require(theirs.count == ours.count)
        var differing = 0
        for (index, (mine, python)) in zip(ours, theirs).enumerated() where mine != python {
            differing += 1
            if differing <= 5 {
                let ourHex = MessagePackTestSupport.hex(Array(mine.prefix(80)))
                let pythonHex = MessagePackTestSupport.hex(Array(python.prefix(80)))
                Issue.record("value #\(index): we wrote \(ourHex), python wrote \(pythonHex)")
            }
        }
        #expect(differing == 0)
    }

    @Test("we read Python's fixed corpus as Python reads it")
    func weReadPythonCorpus() async throws {
        let corpus = try await PythonMsgPack.corpus()
        #expect(corpus.count > 80)
        try await expectAgreement(on: corpus)
    }

    @Test("we read 10,000 random values written by Python as Python reads them", arguments: [UInt64(5), 77])
    func weReadPythonRandomValues(seed: UInt64) async throws {
        let encoded = try await PythonMsgPack.generate(seed: seed, count: 10_000)
        #expect(encoded.count == 10_000)
        try await expectAgreement(on: encoded)
    }

    /// Encodes each value and has Python check that it reads the bytes as the value.
    private func expectPythonReads(_ values: [SyncValue]) async throws {
        let expectations = try values.map {
            PythonMsgPack.Expectation(bytes: try codec.encode($0), canonical: MessagePackCanonicalForm.of($0))
        }
        let report = try await PythonMsgPack.check(expectations)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.prefix(10).joined(separator: "\n"))")
        #expect(report.agreed == expectations.count)
    }

    /// Decodes each of Python's encodings and has Python check two things: that
    /// it reads its own bytes as the value we read (dates to the precision of a
    /// `Date`), and that it reads our re-encoding of that value as exactly that value.
    private func expectAgreement(on encodings: [[UInt8]]) async throws {
        var expectations: [PythonMsgPack.Expectation] = []
        for bytes in encodings {
            let value: SyncValue
            do { value = try codec.decode(bytes) } catch {
                Issue.record("we refused \(MessagePackTestSupport.hex(Array(bytes.prefix(100)))): \(error)")
                continue
            }
            let canonical = MessagePackCanonicalForm.of(value)
            expectations.append(.init(bytes: bytes, canonical: canonical, datesApproximate: true))
            expectations.append(.init(bytes: try codec.encode(value), canonical: canonical))
        }
        let report = try await PythonMsgPack.check(expectations)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.prefix(10).joined(separator: "\n"))")
        #expect(report.agreed == expectations.count)
    }
}
