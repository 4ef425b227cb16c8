import Foundation
import SyncCore
import SyncXMLPlist
import Testing

@Suite("Decoding XML property lists")
struct XMLPlistDecodingTests {
    let codec = XMLPlistCodec()

    private func decode(_ body: String) throws -> SyncValue {
        try codec.decode(XMLPlistTestSupport.document(body))
    }

    @Test("a document without prologue, with comments, processing instructions and odd white space")
    func documentForms() throws {
        #expect(try codec.decode(XMLPlistTestSupport.bytes("<plist><string>x</string></plist>")) == "x")
        #expect(try codec.decode(XMLPlistTestSupport.bytes("<plist version=\"1.0\"><true/></plist>")) == true)
        let decorated = """
            \u{FEFF}<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <!-- a comment -->
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <?app instruction?>
            <plist version="1.0">  <!-- before -->
            \t<dict  >\r\n<key>a</key> <!-- between --> <integer>1</integer>
            <key>b</key><array><false/><true></true></array>
            </dict>
            </plist>
            <!-- after -->
            """
        #expect(try codec.decode(XMLPlistTestSupport.bytes(decorated)) == ["a": 1, "b": [false, true]])
    }

    @Test("strings keep white space and resolve predefined entities, character references and CDATA")
    func strings() throws {
        #expect(try decode("<string>  a \n b  </string>") == "  a \n b  ")
        #expect(try decode("<string></string>") == "")
        #expect(try decode("<string/>") == "")
        #expect(try decode("<string>&lt;&gt;&amp;&quot;&apos;</string>") == "<>&\"'")
        #expect(try decode("<string>&#65;&#x42;&#x1F600;&#13;</string>") == "AB😀\r")
        #expect(try decode("<string><![CDATA[<not> &markup;]]> and more</string>") == "<not> &markup; and more")
        #expect(try decode("<string>a\r\nb\rc</string>") == "a\nb\nc")
        #expect(try decode("<array><string/></array>") == [""])
    }

    @Test("an empty key and an empty dict and array in both forms")
    func emptyForms() throws {
        #expect(try decode("<dict><key></key><string>v</string></dict>") == ["": "v"])
        #expect(try decode("<dict><key/><string>w</string></dict>") == ["": "w"])
        #expect(try decode("<array></array>") == [])
        #expect(try decode("<array/>") == [])
        #expect(try decode("<dict></dict>") == [:])
        #expect(try decode("<dict/>") == [:])
    }

    @Test("integers: decimal, signed, hexadecimal, padded, canonical at Int64.max")
    func integers() throws {
        let cases: [(String, SyncValue)] = [
            ("0", 0), ("-0", 0), ("+5", 5), ("007", 7), (" 42\n", 42), ("0x10", 16), ("0XfF", 255), ("-0x10", -16),
            ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
            ("9223372036854775808", .unsignedInteger(9_223_372_036_854_775_808)),
            ("18446744073709551615", .unsignedInteger(.max)), ("0xFFFFFFFFFFFFFFFF", .unsignedInteger(.max)),
        ]
        for (text, value) in cases {
            #expect(try decode("<integer>\(text)</integer>") == value, "\(text)")
        }
    }

    @Test("reals: decimal forms, exponents, and the words for non-finite values")
    func reals() throws {
        let cases: [(String, Double)] = [
            ("1", 1), ("-2.5", -2.5), (".5", 0.5), ("5.", 5), ("6.02e23", 6.02e23), ("1E-2", 0.01), ("+3", 3),
            ("inf", .infinity), ("+infinity", .infinity), ("-Infinity", -.infinity), ("-inf", -.infinity),
            ("1e400", .infinity), (" 0.25 ", 0.25), ("4.9e-324", .leastNonzeroMagnitude),
        ]
        for (text, real) in cases {
            #expect(try decode("<real>\(text)</real>") == .real(real), "\(text)")
        }
        #expect(try decode("<real>nan</real>").realValue?.isNaN == true)
        #expect(try decode("<real>NaN</real>").realValue?.isNaN == true)
        #expect(try decode("<real>-0.0</real>").realValue?.sign == .minus)
    }

    @Test("dates and data")
    func datesAndData() throws {
        #expect(try decode("<date>2024-05-01T12:30:00Z</date>") == .date(Date(timeIntervalSince1970: 1_714_566_600)))
        #expect(try decode("<date>\n\t2000-02-29T00:00:00Z\n</date>") == .date(Date(timeIntervalSince1970: 951_782_400)))
        #expect(try decode("<date>0000-01-01T00:00:00Z</date>") == .date(Date(timeIntervalSince1970: -62_167_219_200)))
        #expect(try decode("<data>AAEC/w==</data>") == .data([0, 1, 2, 255]))
        #expect(try decode("<data>\n\t\tAA\nEC\r\n /w =\n=\t</data>") == .data([0, 1, 2, 255]))
        #expect(try decode("<data>AAECAw</data>") == .data([0, 1, 2, 3]))
        #expect(try decode("<data></data>") == .data([]))
        #expect(try decode("<data/>") == .data([]))
    }

    @Test("keys: the same key in many dicts, keys that differ only past their first bytes, long and non-ASCII keys")
    func keys() throws {
        let record = "<dict><key>name</key><string>n</string><key>names</key><string>s</string><key>nameX</key><true/></dict>"
        let records = try decode("<array>" + String(repeating: record, count: 50) + "</array>")
        #expect(records == .array(Array(repeating: ["name": "n", "names": "s", "nameX": true], count: 50)))
        let keys = ["a", "ab", "abc", "abcd", "abcde", "abcdefgh", "abcdefghi", "abcdefghijklmnop", "abcdefghijklmnopq",
            "é", "ü", "中文键", "😀", "K", "\u{212A}x", String(repeating: "z", count: 100)]
        let body = keys.enumerated().map { "<key>\($1)</key><integer>\($0)</integer>" }.joined()
        let expected = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, SyncValue.integer(Int64($0))) })
        #expect(try decode("<dict>\(body)</dict>") == .dictionary(expected))
        let many = (0..<100).map { "<key>key number \($0)</key><integer>\($0)</integer>" }.joined()
        #expect(try decode("<dict>\(many)</dict>").dictionaryValue?.count == 100)
    }

    @Test("dicts of one shape (made as copies of the first) keep their own values, whatever shapes come between")
    func repeatedShapes() throws {
        // The same keys in the same order, in another order, one key fewer or more, a long and a non-ASCII
        // key, nested dicts of their own shape; twenty shapes in turn, more than the table's slots.
        var body = ""
        var expected: [SyncValue] = []
        for round in 0..<3 {
            for number in 0..<20 {
                let keys = (0..<(1 + number % 7)).map { "k\(number)-\($0)" }
                    + (number % 5 == 0 ? [String(repeating: "long", count: 10)] : [])
                    + (number % 6 == 0 ? ["cl\u{E9}"] : [])
                let ordered = number % 2 == 0 ? keys : keys.reversed()
                var entries: [String: SyncValue] = [:]
                body += "<dict>"
                for (place, key) in ordered.enumerated() {
                    let value = "\(round)-\(number)-\(place)"
                    body += "<key>\(key)</key><dict><key>v</key><string>\(value)</string></dict>"
                    entries[key] = ["v": .string(value)]
                }
                body += "</dict>"
                expected.append(.dictionary(entries))
            }
            // The first shape again, its keys in the other order.
            body += "<dict><key>k0-0</key><integer>\(round)</integer><key>\(String(repeating: "long", count: 10))</key><true/>"
                + "<key>cl\u{E9}</key><false/></dict>"
            body += "<dict><key>\(String(repeating: "long", count: 10))</key><true/><key>k0-0</key><integer>\(round)</integer>"
                + "<key>cl\u{E9}</key><false/></dict>"
            let first: SyncValue = ["k0-0": .integer(Int64(round)), String(repeating: "long", count: 10): true, "cl\u{E9}": false]
            expected += [first, first]
        }
        #expect(try decode("<array>\(body)</array>") == .array(expected))
    }

    @Test("data: long base64 in lines, whatever the pieces libxml2 reports it in")
    func longData() throws {
        let bytes = (0..<100_003).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        let encoded = try codec.encode(.data(bytes))
        #expect(try codec.decode(encoded) == .data(bytes))
        // One long line, and lines broken at odd places with entity references and CDATA between them.
        let base64 = Data(bytes).base64EncodedString()
        #expect(try decode("<data>\(base64)</data>") == .data(bytes))
        var pieces = ""
        var index = base64.startIndex
        var step = 1
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: step, limitedBy: base64.endIndex) ?? base64.endIndex
            pieces += base64[index..<end] + (step % 3 == 0 ? "<![CDATA[ ]]>" : step % 3 == 1 ? "&#10;" : "\n\t")
            index = end
            step = step % 997 + 1
        }
        #expect(try decode("<data>\(pieces)</data>") == .data(bytes))
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.document("<data>\(base64.dropLast(2))*</data>"))?.code == .malformedInput)
    }

    @Test("other encodings are converted by libxml2")
    func otherEncodings() throws {
        var latin1 = Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><plist><string>caf"#.utf8)
        latin1 += [0xE9] + Array("</string></plist>".utf8)
        #expect(try codec.decode(latin1) == "café")

        let text = #"<?xml version="1.0" encoding="UTF-16"?><plist><string>中😀</string></plist>"#
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in text.utf16 { utf16 += [UInt8(truncatingIfNeeded: unit), UInt8(unit >> 8)] }
        #expect(try codec.decode(utf16) == "中😀")
    }

    @Test("a document referring to Apple's DTD decodes without fetching it")
    func appleDoctype() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://127.0.0.1:1/PropertyList-1.0.dtd">
            <plist version="1.0"><string>offline</string></plist>
            """
        #expect(try codec.decode(XMLPlistTestSupport.bytes(text)) == "offline")
    }

    @Test("many values up to the element limit decode; the limit counts every value")
    func elementCount() throws {
        let limited = XMLPlistCodec(limits: CodecLimits(maxElementCount: 4))
        #expect(try limited.decode(XMLPlistTestSupport.document("<array><integer>1</integer><dict><key>k</key><true/></dict></array>")) == [1, ["k": true]])
        let tooMany = XMLPlistTestSupport.document("<array><integer>1</integer><integer>2</integer><integer>3</integer><integer>4</integer></array>")
        #expect(XMLPlistTestSupport.decodingError(tooMany, codec: limited)?.code == .limitExceeded)
    }

    @Test("a 12 MB string decodes (past libxml2's default cap on text nodes)")
    func hugeText() throws {
        let big = String(repeating: "0123456789abcdef", count: 12 << 16)
        #expect(try codec.decode(XMLPlistTestSupport.document("<string>\(big)</string>")) == .string(big))
    }
}
