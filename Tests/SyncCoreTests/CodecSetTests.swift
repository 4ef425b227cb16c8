import SyncCore
import Testing

/// A codec that only names itself, for negotiation tests.
private struct NamedCodec: SyncCodec {
    let id: CodecID
    let mediaTypes: [String]
    var limits: CodecLimits { .default }
    var features: CodecFeatures { [] }
    func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] { [] }
    func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue { .null }
}

@Suite("Content negotiation")
struct CodecSetTests {
    let codecs = CodecSet([
        NamedCodec(id: .json, mediaTypes: ["application/json"]),
        NamedCodec(id: .messagePack, mediaTypes: ["application/x-msgpack", "application/msgpack"]),
        NamedCodec(id: .xmlPlist, mediaTypes: ["application/x-plist", "text/xml"]),
    ])

    @Test func requestCodecAnswersWhenAcceptIsAbsent() throws {
        let (input, output) = try codecs.negotiate(contentType: "application/msgpack", accept: nil)
        #expect(input.id == .messagePack)
        #expect(output.id == .messagePack)
    }

    @Test func acceptPicksTheAnswerCodecByQuality() throws {
        let (input, output) = try codecs.negotiate(
            contentType: "application/json; charset=utf-8", accept: "text/xml;q=0.5, application/x-msgpack;q=0.9")
        #expect(input.id == .json)
        #expect(output.id == .messagePack)
    }

    @Test("an Accept of one type, in any case or spelling, picks the answer codec")
    func acceptOfOneType() throws {
        for accept in ["application/msgpack", "Application/X-MsgPack", " application/msgpack "] {
            let (input, output) = try codecs.negotiate(contentType: "application/json", accept: accept)
            #expect(input.id == .json)
            #expect(output.id == .messagePack, "\(accept)")
        }
        #expect(try codecs.negotiate(contentType: "text/xml", accept: "application/*").response.id == .xmlPlist)
        #expect(try codecs.negotiate(contentType: "text/xml", accept: "text/csv").response.id == .xmlPlist)
        #expect(try codecs.negotiate(contentType: nil, accept: "text/xml").response.id == .xmlPlist)
    }

    @Test func unknownContentTypeIs415WithTheSupportedList() {
        #expect {
            _ = try codecs.negotiate(contentType: "text/csv", accept: nil)
        } throws: { error in
            guard let error = error as? SyncServiceError else { return false }
            return error.status == 415 && error.supportedMediaTypes.contains("application/json")
                && error.supportedMediaTypes.contains("text/xml")
        }
    }

    @Test func missingContentTypeUsesTheDefaultCodec() throws {
        let (input, _) = try codecs.negotiate(contentType: nil, accept: "*/*")
        #expect(input.id == .json)
    }
}
