import Foundation
import SyncBinaryPlist
import SyncCore
import SyncTesting
import Testing

@Suite("Binary plist interop with Foundation's PropertyListSerialization")
struct BinaryPlistFoundationInteropTests {
    let codec = BinaryPlistCodec()

    /// Checks both directions for one value: Foundation reads our bytes to it, and we read Foundation's bytes to it.
    private func checkBothWays(_ value: SyncValue, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours = try codec.encode(value)
        let readByFoundation = try FoundationPlist.decode(ours)
        #expect(PlistCanonicalForm.exactlyEqual(readByFoundation, value), "Foundation read \(readByFoundation)",
                sourceLocation: sourceLocation)
        let theirs = try FoundationPlist.encode(value)
        let readByUs = try codec.decode(theirs)
        #expect(PlistCanonicalForm.exactlyEqual(readByUs, value), "we read \(readByUs)", sourceLocation: sourceLocation)
    }

    @Test("the fixed corpus, both ways")
    func corpus() throws {
        for value in BinaryPlistCorpus.all { try checkBothWays(value) }
    }

    @Test("random values, both ways", arguments: [UInt64(3), 4_242])
    func randomValues(seed: UInt64) throws {
        var values = RandomValues(seed: seed, features: codec.features)
        for _ in 0..<1_500 { try checkBothWays(values.next()) }
        for _ in 0..<200 { try checkBothWays(values.nextDictionary()) }
    }

    @Test("Foundation's 4-byte floats and Booleans read as reals and Booleans")
    func floatsAndBooleans() throws {
        let object: [Any] = [NSNumber(value: Float(0.1)), NSNumber(value: true), false, NSNumber(value: UInt8(200))]
        let bytes = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        #expect(try codec.decode(Array(bytes)) == [.real(Double(Float(0.1))), true, false, 200])
    }

    @Test("a records-like message takes at most 40% of the bytes of the XML plist")
    func sizeAgainstXML() throws {
        let records = BinaryPlistCorpus.records(count: 200)
        let binary = try codec.encode(records)
        let xml = try FoundationPlist.encodeXML(records)
        #expect(Double(binary.count) <= 0.4 * Double(xml.count), "\(binary.count) bytes against \(xml.count) of XML")
        #expect(binary.count <= (try FoundationPlist.encode(records)).count)
    }
}
