import Synchronization
import SyncCore
import SyncJSON

/// Answers with what it saw — decoded body, account, mount, path, session,
/// user agent — in the codec `Accept` asks for, and counts the requests it handles.
///
/// The answer continues the request's session, or starts `new-session`.
struct EchoService: SyncService {
    let codecs = CodecSet([JSONCodec(), TaggedJSONCodec()])
    let handled = HandledCounter()

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        handled.increment()
        let (input, output) = try codecs.negotiate(contentType: request.contentType, accept: request.accept)
        let body = request.body.isEmpty ? SyncValue.null : try input.decode(request.body)
        let answer: SyncValue = [
            "account": .string(context.account.rawValue), "body": body, "mount": .string(context.mountPath),
            "path": .string(request.path), "method": .string(request.method.rawValue),
            "session": request.session.map(SyncValue.string) ?? .null,
            "userAgent": request.userAgent.map(SyncValue.string) ?? .null,
        ]
        return try .encoded(answer, with: output, session: request.session ?? "new-session")
    }
}

/// JSON under another media type: a second codec, so `Accept` has a choice to make.
struct TaggedJSONCodec: SyncCodec {
    static let mediaType = "application/x-anchorage-tagged-json"
    private let json = JSONCodec()
    var id: CodecID { "tagged-json" }
    var mediaTypes: [String] { [Self.mediaType] }
    var limits: CodecLimits { json.limits }
    var features: CodecFeatures { json.features }
    func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] { try json.encode(value) }
    func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue { try json.decode(bytes) }
}

/// Counts calls from any task.
final class HandledCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
