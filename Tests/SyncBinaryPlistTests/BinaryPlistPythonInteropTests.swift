import Foundation
import SyncBinaryPlist
import SyncCore
import SyncTesting
import TestSupport
import Testing

@Suite(
    "Binary plist interop with Python's plistlib",
    .enabled("python3 with plistlib is not available") { await PythonPlist.python.isAvailable() }
)
struct BinaryPlistPythonInteropTests {
    let codec = BinaryPlistCodec()

    /// Checks that plistlib reads each of our encodings to the value encoded.
    private func checkPythonReads(_ values: [SyncValue], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let pairs = try values.map { (file: try codec.encode($0), canonical: PlistCanonicalForm.of($0)) }
        let report = try await PythonPlist.check(pairs)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.prefix(5))", sourceLocation: sourceLocation)
        #expect(report.agreed == values.count, sourceLocation: sourceLocation)
    }

    /// Checks that we read each plistlib file to the value plistlib wrote.
    private func checkWeRead(_ files: [(file: [UInt8], canonical: String)], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (file, canonical) in files {
            let value = try codec.decode(file)
            #expect(PlistCanonicalForm.of(value) == canonical, sourceLocation: sourceLocation)
            // and what we read, we write so that plistlib reads the same again
            #expect(PlistCanonicalForm.exactlyEqual(try codec.decode(codec.encode(value)), value), sourceLocation: sourceLocation)
        }
    }

    @Test("plistlib reads our fixed corpus")
    func pythonReadsCorpus() async throws {
        var values = BinaryPlistCorpus.all
        values.append(.real(.nan))
        try await checkPythonReads(values)
    }

    @Test("plistlib reads 5,000 random values we write", arguments: [UInt64(11), 12])
    func pythonReadsRandom(seed: UInt64) async throws {
        var values = RandomValues(seed: seed, features: codec.features)
        try await checkPythonReads((0..<4_000).map { _ in values.next() } + (0..<1_000).map { _ in values.nextDictionary() })
    }

    @Test("we read plistlib's fixed corpus, UIDs and keyed archives included")
    func weReadCorpus() async throws {
        let files = try await PythonPlist.corpusFiles()
        #expect(files.count > 60)
        try checkWeRead(files)
    }

    @Test("we read 5,000 random files plistlib writes", arguments: [UInt64(21), 22])
    func weReadRandom(seed: UInt64) async throws {
        let files = try await PythonPlist.randomFiles(seed: seed, count: 5_000)
        #expect(files.count == 5_000)
        try checkWeRead(files)
    }

    @Test("plistlib's file for None is refused: Apple's readers do not take the null object")
    func noneRefused() async throws {
        let file = try await PythonPlist.noneFile()
        #expect {
            try codec.decode(file)
        } throws: { ($0 as? CodecError)?.code == .malformedInput }
    }

    @Test("keys distinct in Python but equal as Swift strings are refused as a duplicate")
    func canonicallyEquivalentKeys() async throws {
        let file = try await PythonPlist.equivalentKeysFile()
        #expect {
            try codec.decode(file)
        } throws: { ($0 as? CodecError)?.code == .malformedInput }
    }
}
