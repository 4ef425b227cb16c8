import Foundation
import SyncCore
import SyncTesting
import SyncXMLPlist
import TestSupport
import Testing

@Suite(
    "XML property list interop with Python's plistlib",
    .enabled("python3 with plistlib is not installed: the plistlib interop tests need it") { await PythonPlist.python.isAvailable() })
struct XMLPlistPythonInteropTests {
    let codec = XMLPlistCodec()

    /// Values written by us, to be read by Python (plistlib's dates start at year 1).
    static let writtenCorpus: [SyncValue] = [
        XMLPlistTestSupport.nestedSample,
        "", "plain", "  spaced  ", "<tag> & \"quotes\" ]]>", "tab\tnew\nline\rreturn\r\n", "é ß 中文 😀 𝄞 \u{10FFFF} \u{FEFF}",
        0, -1, .integer(.max), .integer(.min), .unsignedInteger(UInt64(Int64.max) + 1), .unsignedInteger(.max),
        0.0, .real(-0.0), 1.0, -2.5, 0.1, 1e16, 1e-7, 1e300, .real(.pi), .real(.leastNonzeroMagnitude),
        .real(.greatestFiniteMagnitude), .real(.infinity), .real(-.infinity), .real(.nan),
        true, false,
        .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: -1)),
        .date(Date(timeIntervalSince1970: -62_135_596_800)), .date(Date(timeIntervalSince1970: 253_402_300_799)),
        .data([]), .data([0]), .data([0, 1]), .data([0, 1, 2]), .data(Array(0...255)),
        [], [:], [[[[]]]], ["": ""], ["b": 1, "a": 2, "é": 3, "e": 4, "😀": 5, "Z": 6],
    ]

    /// Documents as other writers produce them: Apple's layout, Python's, and hand-written variants.
    static let readCorpus: [String] = [
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>CFBundleName</key>
        \t<string>Anchorage</string>
        \t<key>LSMinimumSystemVersion</key>
        \t<string>15.0</string>
        \t<key>Icon</key>
        \t<data>
        \tiVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGA
        \tWjR9awAAAABJRU5ErkJggg==
        \t</data>
        \t<key>Modified</key>
        \t<date>2024-05-01T12:30:00Z</date>
        \t<key>Count</key>
        \t<integer>-42</integer>
        \t<key>Ratio</key>
        \t<real>0.33333333333333331</real>
        \t<key>Flags</key>
        \t<array>
        \t\t<true/>
        \t\t<false/>
        \t</array>
        </dict>
        </plist>
        """,
        "<plist version=\"1.0\"><integer>0x7fffffffffffffff</integer></plist>",
        "<plist version=\"1.0\"><integer>18446744073709551615</integer></plist>",
        "<plist version=\"1.0\"><integer>-9223372036854775808</integer></plist>",
        "<plist version=\"1.0\"><real>1e+300</real></plist>",
        "<plist version=\"1.0\"><real>-0.0</real></plist>",
        "<plist version=\"1.0\"><real>inf</real></plist>",
        "<plist version=\"1.0\"><real>-inf</real></plist>",
        "<plist version=\"1.0\"><real>nan</real></plist>",
        "<plist version=\"1.0\"><real>4.9406564584124654e-324</real></plist>",
        "<plist version=\"1.0\"><string>&lt;&amp;&gt; &#233;&#x1F600; &#13;<![CDATA[<raw>]]></string></plist>",
        "<plist version=\"1.0\"><string>a\r\nb</string></plist>",
        "<plist version=\"1.0\"><date>0001-01-01T00:00:00Z</date></plist>",
        "<plist version=\"1.0\"><data>\n  AAEC\n  /w==\n</data></plist>",
        "<plist version=\"1.0\"><dict><key></key><string/><key>é</key><dict/></dict></plist>",
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><plist version=\"1.0\"><string>plain</string></plist>",
        "<plist version=\"1.0\"><!-- c --><array><?pi x?><true/><!-- c --></array></plist>",
    ]

    @Test("the Python check notices a value or a kind that differs")
    func checkNoticesDisagreement() async throws {
        let pairs: [(SyncValue, SyncValue)] = [(1, 2), (1, 1.0), (.real(0.0), .real(-0.0)), ("é", "e"), (["a": 1], ["b": 1])]
        let report = try await PythonPlist.check(try pairs.map { (try codec.encode($0.0), CanonicalText.of($0.1)) })
        #expect(report.agreed == 0)
        #expect(report.disagreements.count == pairs.count)
    }

    @Test("Python reads the fixed corpus we write as the same values")
    func pythonReadsOurCorpus() async throws {
        let pairs = try Self.writtenCorpus.map { (try codec.encode($0), CanonicalText.of($0)) }
        let report = try await PythonPlist.check(pairs)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.joined(separator: "\n"))")
        #expect(report.agreed == pairs.count)
    }

    @Test("Python reads 10,000 random values we write as the same values", arguments: [UInt64(3), 20_240_502])
    func pythonReadsOurRandomValues(seed: UInt64) async throws {
        var values = RandomValues(seed: seed, features: codec.features)
        var pairs: [(document: [UInt8], canonical: String)] = []
        for _ in 0..<10_000 {
            let value = XMLPlistTestSupport.xmlSafe(values.next())
            pairs.append((try codec.encode(value), CanonicalText.of(value)))
        }
        let report = try await PythonPlist.check(pairs)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.prefix(10).joined(separator: "\n"))")
        #expect(report.agreed == pairs.count)
    }

    @Test("we read the fixed corpus as Python reads it, and Python reads our re-encoding the same")
    func weReadTheCorpus() async throws {
        var pairs: [(document: [UInt8], canonical: String)] = []
        for text in Self.readCorpus {
            let document = Array(text.utf8)
            let value = try codec.decode(document)
            pairs.append((document, CanonicalText.of(value)))
            pairs.append((try codec.encode(value), CanonicalText.of(value)))
        }
        let report = try await PythonPlist.check(pairs)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.joined(separator: "\n"))")
        #expect(report.agreed == pairs.count)
    }

    @Test("we read 10,000 random documents written by plistlib.dumps as the values Python wrote", arguments: [UInt64(5), 77])
    func weReadPythonRandomValues(seed: UInt64) async throws {
        let generated = try await PythonPlist.generate(seed: seed, count: 10_000)
        #expect(generated.count == 10_000)
        var unsigned = 0
        for (index, (document, canonical)) in generated.enumerated() {
            let value: SyncValue
            do { value = try codec.decode(document) } catch {
                Issue.record("document #\(index): we refused \(String(decoding: document.prefix(300), as: UTF8.self)): \(error)")
                continue
            }
            #expect(CanonicalText.of(value) == canonical, "document #\(index): \(String(decoding: document.prefix(300), as: UTF8.self))")
            if case .unsignedInteger = value { unsigned += 1 }
        }
        #expect(unsigned > 0, "the generator should produce integers above Int64.max")
    }
}
