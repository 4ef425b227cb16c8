import Foundation
import SyncCore
import SyncTesting
import SyncXMLPlist
import Testing

@Suite("Malformed XML property lists")
struct XMLPlistMalformedInputTests {
    let codec = XMLPlistCodec()

    private func error(_ body: String) -> CodecError? {
        XMLPlistTestSupport.decodingError(XMLPlistTestSupport.document(body))
    }

    private func expectMalformed(_ body: String, mentioning words: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        let error = error(body)
        #expect(error?.code == .malformedInput, "\(body) gave \(String(describing: error))", sourceLocation: sourceLocation)
        for word in words {
            #expect(error?.message.contains(word) == true, "\(String(describing: error)) should mention \(word)", sourceLocation: sourceLocation)
        }
    }

    @Test("a document cut at every byte is refused with malformed input")
    func truncatedAtEveryByte() throws {
        let bytes = try codec.encode(XMLPlistTestSupport.nestedSample)
        for length in 0..<(bytes.count - 1) {  // the last byte is the final newline
            let error = XMLPlistTestSupport.decodingError(Array(bytes[..<length]))
            #expect(error?.code == .malformedInput, "the first \(length) bytes gave \(String(describing: error))")
        }
    }

    @Test("random bytes are refused with a codec error")
    func randomBytes() {
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...200, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if Bool.random(using: &generator) { bytes = Array("<plist>".utf8) + bytes }
            let error = XMLPlistTestSupport.decodingError(bytes)
            #expect(error?.code == .malformedInput || error?.code == .limitExceeded, "\(String(describing: error))")
        }
    }

    @Test("empty input and input that is not XML")
    func notXML() {
        #expect(XMLPlistTestSupport.decodingError([])?.code == .malformedInput)
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes("   "))?.code == .malformedInput)
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes("{\"a\": 1}"))?.code == .malformedInput)
        #expect(XMLPlistTestSupport.decodingError(Array("bplist00".utf8) + [0, 0, 0])?.code == .malformedInput)
        let error = XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes("<plist><string>a</strin></plist>"))
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("not well-formed XML") == true)
        #expect(error?.offset != nil)
    }

    @Test("invalid UTF-8 and characters XML forbids are refused")
    func badCharacters() {
        let invalidUTF8 = Array("<plist><string>".utf8) + [0xC3, 0x28] + Array("</string></plist>".utf8)
        #expect(XMLPlistTestSupport.decodingError(invalidUTF8)?.code == .malformedInput)
        expectMalformed("<string>\u{1}</string>")
        expectMalformed("<string>&#1;</string>")
        expectMalformed("<string>&#0;</string>")
        expectMalformed("<string>&#xFFFE;</string>")
    }

    @Test("the root must be one <plist> holding exactly one value")
    func rootShape() {
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes("<string>bare</string>"))?.code == .malformedInput)
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes("<dict/>"))?.code == .malformedInput)
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes("<plist></plist>"))?.code == .malformedInput)
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes("<plist/>"))?.code == .malformedInput)
        expectMalformed("<true/><false/>", mentioning: "more than one value")
        expectMalformed("<plist><true/></plist>", mentioning: "<plist>")
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes("<plist><true/></plist><plist><true/></plist>"))?.code == .malformedInput)
    }

    @Test("unknown elements are refused, naming them")
    func unknownElements() {
        expectMalformed("<object/>", mentioning: "<object>")
        expectMalformed("<array><null/></array>", mentioning: "<null>")
        expectMalformed("<String>x</String>", mentioning: "<String>")
        expectMalformed("<dict><key>k</key><uid>1</uid></dict>", mentioning: "<uid>")
        expectMalformed("<p:string xmlns:p=\"urn:x\">x</p:string>", mentioning: "namespace")
        expectMalformed("<string xmlns=\"urn:x\">x</string>", mentioning: "namespace")
    }

    @Test("text outside values and elements inside scalars are refused")
    func misplacedText() {
        expectMalformed("hello<string>x</string>", mentioning: "text is not allowed")
        expectMalformed("<array>loose<string>x</string></array>", mentioning: "<array>")
        expectMalformed("<dict>loose</dict>", mentioning: "<dict>")
        expectMalformed("<true>yes</true>", mentioning: "true")
        expectMalformed("<array><![CDATA[x]]></array>", mentioning: "text is not allowed")
        expectMalformed("<string><string>x</string></string>", mentioning: "inside <string>")
        expectMalformed("<integer><b>1</b></integer>")
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes("<plist><true/></plist>trailing"))?.code == .malformedInput)
    }

    @Test("dictionary structure: keys and values must alternate, keys must be unique")
    func dictionaryShape() {
        expectMalformed("<dict><key>a</key><integer>1</integer><key>a</key><integer>2</integer></dict>", mentioning: "twice", "\"a\"")
        expectMalformed("<dict><key>a</key><dict/><key>b</key><true/><key>a</key><false/></dict>", mentioning: "twice")
        // Keys equal as Swift strings (canonical equivalence) though their bytes differ, and
        // duplicates among long keys and in a dict with many keys.
        expectMalformed("<dict><key>caf\u{E9}</key><true/><key>cafe\u{301}</key><false/></dict>", mentioning: "twice")
        expectMalformed("<dict><key>K</key><true/><key>\u{212A}</key><false/></dict>", mentioning: "twice")
        expectMalformed("<dict><key>\u{212A}</key><true/><key>K</key><false/></dict>", mentioning: "twice")
        let long = String(repeating: "long key ", count: 5)
        expectMalformed("<dict><key>\(long)</key><true/><key>\(long)</key><false/></dict>", mentioning: "twice")
        let many = (0..<40).map { "<key>k\($0)</key><integer>\($0)</integer>" }.joined()
        expectMalformed("<dict>\(many)<key>k7</key><true/></dict>", mentioning: "twice", "\"k7\"")
        expectMalformed("<dict>\(many)<key>\u{212A}0</key><true/><key>K0</key><true/></dict>", mentioning: "twice")
        expectMalformed("<dict><string>no key</string></dict>", mentioning: "no <key>")
        expectMalformed("<dict><key>a</key></dict>", mentioning: "no value")
        expectMalformed("<dict><key>a</key><key>b</key><true/></dict>", mentioning: "no value")
        expectMalformed("<array><key>a</key></array>", mentioning: "<key>")
        expectMalformed("<key>a</key>", mentioning: "<key>")
    }

    @Test("bad scalar text is refused, quoting it")
    func badScalars() {
        for text in ["", "1.5", "12a", "0x", "--1", "18446744073709551616", "-9223372036854775809", "1 2", "0x1G"] {
            expectMalformed("<integer>\(text)</integer>", mentioning: "<integer>")
        }
        for text in ["", "1,5", "e5", "1e", "0x10", "infinite", "nan1", ". ", "1.2.3"] {
            expectMalformed("<real>\(text)</real>", mentioning: "<real>")
        }
        for text in ["2024-05-01", "2024-05-01T12:30:00", "2024-05-01T12:30:00+01:00", "2024-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T12:30:00.5Z", "99999-01-01T00:00:00Z", ""]
        {
            expectMalformed("<date>\(text)</date>", mentioning: "<date>")
        }
        for text in ["A", "AAAAA", "AA=A", "AA==AA==", "A*==", "AAA==="] {
            expectMalformed("<data>\(text)</data>", mentioning: "base64")
        }
    }

    @Test("billion laughs: a document declaring entities is refused before any expansion")
    func billionLaughs() {
        var declarations = "<!ENTITY lol \"lol\">\n"
        for level in 1...9 {
            let previous = level == 1 ? "lol" : "lol\(level - 1)"
            declarations += "<!ENTITY lol\(level) \"\(String(repeating: "&\(previous);", count: 10))\">\n"
        }
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE plist [
            \(declarations)]>
            <plist><string>&lol9;</string></plist>
            """
        let error = XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes(text))
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("entity") == true, "\(String(describing: error))")
    }

    @Test("parameter entities and entity references without a declaration are refused")
    func otherEntities() {
        let parameter = """
            <!DOCTYPE plist [ <!ENTITY % p "<!ENTITY x 'y'>"> %p; ]>
            <plist><string>&x;</string></plist>
            """
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes(parameter))?.code == .malformedInput)
        expectMalformed("<string>&undeclared;</string>")
        expectMalformed("<string>&nbsp;</string>")
    }

    @Test("external entities are refused without reading the file")
    func externalEntity() throws {
        let secret = "secret-\(UUID().uuidString)"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("anchorage-xxe-\(UUID().uuidString).txt")
        try Data(secret.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        for target in [file.absoluteString, "file:///etc/passwd", "http://127.0.0.1:1/x"] {
            let text = """
                <?xml version="1.0"?>
                <!DOCTYPE plist [ <!ENTITY xxe SYSTEM "\(target)"> ]>
                <plist><string>&xxe;</string></plist>
                """
            let error = XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes(text))
            #expect(error?.code == .malformedInput)
            #expect(error?.message.contains("entity") == true)
            #expect(error?.message.contains(secret) == false)
            #expect(error?.message.contains("root:") == false)
        }
    }

    @Test("an external DTD is never loaded: entities it would declare stay unknown")
    func externalDTDNotLoaded() throws {
        let dtd = FileManager.default.temporaryDirectory.appendingPathComponent("anchorage-\(UUID().uuidString).dtd")
        try Data("<!ENTITY injected \"from the DTD\">".utf8).write(to: dtd)
        defer { try? FileManager.default.removeItem(at: dtd) }

        // Were the DTD read, its entity declaration would be refused; unread, the document is fine.
        let plain = "<!DOCTYPE plist SYSTEM \"\(dtd.absoluteString)\"><plist><string>ok</string></plist>"
        #expect(try codec.decode(XMLPlistTestSupport.bytes(plain)) == "ok")
        // A reference to one of its entities is an unknown entity, not its text.
        let referring = "<!DOCTYPE plist SYSTEM \"\(dtd.absoluteString)\"><plist><string>&injected;</string></plist>"
        let error = XMLPlistTestSupport.decodingError(XMLPlistTestSupport.bytes(referring))
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("from the DTD") == false)
    }

    @Test("nesting past the depth limit is refused with limit exceeded")
    func nestingPastLimit() {
        let limited = XMLPlistCodec(limits: CodecLimits(maxDepth: 8))
        let ok = String(repeating: "<array>", count: 8) + String(repeating: "</array>", count: 8)
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.document(ok), codec: limited) == nil)
        let deep = String(repeating: "<array>", count: 9) + String(repeating: "</array>", count: 9)
        #expect(XMLPlistTestSupport.decodingError(XMLPlistTestSupport.document(deep), codec: limited)?.code == .limitExceeded)

        // Far deeper than the default limit, and unclosed: refused at the limit, no stack overflow.
        let hostile = XMLPlistTestSupport.bytes("<plist>" + String(repeating: "<dict><key>k</key>", count: 100_000))
        let error = XMLPlistTestSupport.decodingError(hostile)
        #expect(error?.code == .limitExceeded)
        #expect(error?.offset != nil)
    }

    @Test("input larger than the size limit is refused before parsing")
    func inputTooLarge() {
        let limited = XMLPlistCodec(limits: CodecLimits(maxInputBytes: 1_000))
        let huge = XMLPlistTestSupport.document("<string>\(String(repeating: "x", count: 2_000))</string>")
        let error = XMLPlistTestSupport.decodingError(huge, codec: limited)
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("1000") == true)
    }

    @Test("huge claimed content: a text run far larger than the rest of the document is bounded by the input")
    func hugeClaimedContent() {
        // XML carries no lengths, so nothing is allocated from a claim; an unterminated
        // text run simply ends with the input, and the document is incomplete.
        let unterminated = XMLPlistTestSupport.bytes("<plist><data>" + String(repeating: "QUFB", count: 1 << 18))
        #expect(XMLPlistTestSupport.decodingError(unterminated)?.code == .malformedInput)
        let limited = XMLPlistCodec(limits: CodecLimits(maxInputBytes: 1 << 16))
        #expect(XMLPlistTestSupport.decodingError(unterminated, codec: limited)?.code == .limitExceeded)
    }
}
