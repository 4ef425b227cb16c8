/// The codecs a service or client speaks, with content negotiation between them.
///
/// ```swift
/// let codecs = CodecSet([JSONCodec(), MessagePackCodec()])
/// let (input, output) = try codecs.negotiate(contentType: request.contentType, accept: request.accept)
/// ```
public struct CodecSet: Sendable {
    /// The codecs, the default (used when a request names none) first.
    public let codecs: [any SyncCodec]

    /// Makes a set; the first codec is the default.
    /// - Precondition: `codecs` is not empty.
    public init(_ codecs: [any SyncCodec]) {
        precondition(!codecs.isEmpty, "a CodecSet needs at least one codec")
        self.codecs = codecs
    }

    /// The default codec.
    public var defaultCodec: any SyncCodec { codecs[0] }

    /// Every media type the set reads, primary types first.
    public var supportedMediaTypes: [String] {
        var seen = Set<String>()
        let all = codecs.map(\.primaryMediaType) + codecs.flatMap(\.mediaTypes)
        return all.filter { seen.insert($0).inserted }
    }

    /// The codec for a media type, if any.
    public func codec(forMediaType mediaType: String) -> (any SyncCodec)? {
        codecs.first { $0.accepts(mediaType: mediaType) }
    }

    /// The codec with an id, if any.
    public func codec(for id: CodecID) -> (any SyncCodec)? {
        codecs.first { $0.id == id }
    }

    /// Chooses the codec that reads a request and the one that writes its answer.
    ///
    /// The request's `Content-Type` picks the input codec (the default codec
    /// when absent, for bodiless requests). The answer uses the first type in
    /// `Accept` the set supports, else the request's codec. Quality values are
    /// honoured; `*/*` and absent `Accept` mean "the request's codec".
    ///
    /// - Throws: ``SyncServiceError`` with status 415 naming the supported types,
    ///   for a `Content-Type` no codec reads.
    public func negotiate(contentType: String?, accept: String?) throws -> (request: any SyncCodec, response: any SyncCodec) {
        let input: any SyncCodec
        if let contentType, !contentType.isEmpty {
            guard let codec = codec(forMediaType: contentType) else {
                throw SyncServiceError.unsupportedMediaType(contentType, supported: supportedMediaTypes)
            }
            input = codec
        } else {
            input = defaultCodec
        }
        // Most requests accept exactly the type they send: answered in it without parsing Accept.
        guard let accept, !accept.isEmpty, accept != contentType else { return (input, input) }
        // One type without parameters (the answer a client like Anchorage's asks for): no ranking to do.
        if !accept.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: ";") }) {
            if input.accepts(mediaType: accept) { return (input, input) }
            let type = MediaType.essence(of: accept)
            if type == "*/*" || type == "application/*" || input.accepts(mediaType: type) { return (input, input) }
            return (input, codec(forMediaType: type) ?? input)
        }
        let ranked = accept.split(separator: ",").enumerated().compactMap { index, part -> (String, Double, Int)? in
            let pieces = part.split(separator: ";")
            guard let type = pieces.first.map({ MediaType.essence(of: String($0)) }) else { return nil }
            var quality = 1.0
            for parameter in pieces.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
                if pair.count == 2, pair[0] == "q", let q = Double(pair[1]) { quality = q }
            }
            return quality > 0 ? (type, quality, index) : nil
        }.sorted { ($0.1, -$0.2) > ($1.1, -$1.2) }
        for (type, _, _) in ranked {
            if type == "*/*" || type == "application/*" { return (input, input) }
            if input.accepts(mediaType: type) { return (input, input) }
            if let codec = codec(forMediaType: type) { return (input, codec) }
        }
        return (input, input)
    }
}
