import Foundation
import SyncCore
import SyncXMLPlist
import Testing

@Suite("Encoding XML property lists")
struct XMLPlistEncodingTests {
    let codec = XMLPlistCodec()

    @Test("a document has Apple's prologue, tab indentation and sorted keys")
    func layout() throws {
        let value: SyncValue = [
            "b": [1, -2, 2.5, true, false],
            "a": ["text": "x", "empty": [], "none": [:]],
            "d": .date(Date(timeIntervalSince1970: 1_714_566_600)),
            "c": .data([0, 1, 2, 255]),
        ]
        let expected = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>a</key>
            \t<dict>
            \t\t<key>empty</key>
            \t\t<array/>
            \t\t<key>none</key>
            \t\t<dict/>
            \t\t<key>text</key>
            \t\t<string>x</string>
            \t</dict>
            \t<key>b</key>
            \t<array>
            \t\t<integer>1</integer>
            \t\t<integer>-2</integer>
            \t\t<real>2.5</real>
            \t\t<true/>
            \t\t<false/>
            \t</array>
            \t<key>c</key>
            \t<data>
            \tAAEC/w==
            \t</data>
            \t<key>d</key>
            \t<date>2024-05-01T12:30:00Z</date>
            </dict>
            </plist>

            """
        #expect(try XMLPlistTestSupport.encodedText(value) == expected)
    }

    @Test("markup characters are escaped and a carriage return is written as a character reference")
    func escaping() throws {
        let text = try XMLPlistTestSupport.encodedText(["<k&>": "a<b>&c\"d'e\r\n\tf ]]>"])
        #expect(text.contains("<key>&lt;k&amp;&gt;</key>"))
        #expect(text.contains("<string>a&lt;b&gt;&amp;c\"d'e&#13;\n\tf ]]&gt;</string>"))
    }

    @Test("non-ASCII text is written as raw UTF-8")
    func rawUTF8() throws {
        let text = try XMLPlistTestSupport.encodedText("é中😀\u{10FFFF}")
        #expect(text.contains("<string>é中😀\u{10FFFF}</string>"))
    }

    @Test("integers at the extremes, unsigned ones above Int64.max")
    func integers() throws {
        #expect(try XMLPlistTestSupport.encodedText(.integer(.min)).contains("<integer>-9223372036854775808</integer>"))
        #expect(try XMLPlistTestSupport.encodedText(.integer(.max)).contains("<integer>9223372036854775807</integer>"))
        #expect(try XMLPlistTestSupport.encodedText(.unsignedInteger(.max)).contains("<integer>18446744073709551615</integer>"))
    }

    @Test("reals use the shortest text that reads back exactly; non-finite ones use Apple's words")
    func reals() throws {
        let cases: [(Double, String)] = [
            (0.1, "0.1"), (-0.0, "-0.0"), (1e16, "1e+16"), (.leastNonzeroMagnitude, "5e-324"), (.infinity, "+infinity"),
            (-.infinity, "-infinity"), (.nan, "nan"), (3, "3.0"),
        ]
        for (real, written) in cases {
            #expect(try XMLPlistTestSupport.encodedText(.real(real)).contains("<real>\(written)</real>"))
        }
    }

    @Test("dates are whole seconds in UTC with a Z, from year 0000 to 9999")
    func dates() throws {
        let cases: [(Double, String)] = [
            (0, "1970-01-01T00:00:00Z"), (-1, "1969-12-31T23:59:59Z"), (951_782_400, "2000-02-29T00:00:00Z"),
            (-62_167_219_200, "0000-01-01T00:00:00Z"), (253_402_300_799, "9999-12-31T23:59:59Z"),
            (-2_208_988_800, "1900-01-01T00:00:00Z"),
        ]
        for (seconds, written) in cases {
            let text = try XMLPlistTestSupport.encodedText(.date(Date(timeIntervalSince1970: seconds)))
            #expect(text.contains("<date>\(written)</date>"))
        }
    }

    @Test("data is base64 in lines of 76 characters, indented like its element")
    func dataLines() throws {
        let text = try XMLPlistTestSupport.encodedText([.data(Array(repeating: 0, count: 100))])
        let line1 = "\t" + String(repeating: "A", count: 76)
        let line2 = "\t" + String(repeating: "A", count: 58) + "=="
        #expect(text.contains("\t<data>\n\(line1)\n\(line2)\n\t</data>\n"))
        #expect(try XMLPlistTestSupport.encodedText(.data([])).contains("<data>\n</data>"))
    }

    @Test("null is refused, naming where it is")
    func nullRefused() {
        let error = XMLPlistTestSupport.encodingError(["items": [1, ["name": nil]]])
        #expect(error?.code == .unsupportedValue)
        #expect(error?.message.contains("root.items[1].name") == true, "\(String(describing: error))")
    }

    @Test("a date with a fraction of a second is refused, never rounded")
    func fractionalDateRefused() {
        let error = XMLPlistTestSupport.encodingError([.date(Date(timeIntervalSince1970: 1.5))])
        #expect(error?.code == .unsupportedValue)
        #expect(error?.message.contains("root[0]") == true)
    }

    @Test("a date outside the years 0000–9999 is refused")
    func farDateRefused() {
        for seconds in [-62_167_219_201.0, 253_402_300_800, 1e18] {
            #expect(XMLPlistTestSupport.encodingError(.date(Date(timeIntervalSince1970: seconds)))?.code == .unsupportedValue)
        }
    }

    @Test(
        "characters XML 1.0 forbids are refused in strings and keys",
        arguments: ["\u{0}", "\u{1}", "\u{8}", "\u{B}", "\u{C}", "\u{E}", "\u{1F}", "\u{FFFE}", "\u{FFFF}"] as [String])
    func forbiddenCharactersRefused(character: String) {
        let inString = XMLPlistTestSupport.encodingError(["key": .string("a\(character)b")])
        #expect(inString?.code == .unsupportedValue)
        #expect(inString?.message.contains("U+") == true)
        #expect(inString?.message.contains("root.key") == true)
        let inKey = XMLPlistTestSupport.encodingError(.dictionary(["k\(character)": 1]))
        #expect(inKey?.code == .unsupportedValue)
    }

    @Test("the encoder refuses nesting deeper than the limit")
    func depthRefused() {
        let codec = XMLPlistCodec(limits: CodecLimits(maxDepth: 2))
        #expect(XMLPlistTestSupport.encodingError([[1]], codec: codec) == nil)
        #expect(XMLPlistTestSupport.encodingError([[[1]]], codec: codec)?.code == .limitExceeded)
        #expect(XMLPlistTestSupport.encodingError([["k": [:]]], codec: codec)?.code == .limitExceeded)
    }

    @Test("the codec names itself and its media types")
    func identity() {
        #expect(codec.id == .xmlPlist)
        #expect(codec.primaryMediaType == "application/x-plist")
        #expect(codec.accepts(mediaType: "text/xml; charset=utf-8"))
        #expect(codec.accepts(mediaType: "application/xml"))
        #expect(!codec.features.contains(.null))
        #expect(codec.features.isSuperset(of: [.date, .data, .unsignedInteger, .nonFiniteReal]))
    }
}
