import SyncCore
import SyncTesting
import Testing

/// A codec for flat dictionaries of integers and strings, one `key=value` a
/// line: enough to carry the engine tests' answers without a codec module.
struct LinesCodec: SyncCodec {
    var id: CodecID { "lines" }
    var mediaTypes: [String] { ["text/x-lines"] }
    var limits: CodecLimits { .default }
    var features: CodecFeatures { [] }

    func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] {
        guard case .dictionary(let entries) = value else { throw .unsupportedValue("only a dictionary") }
        var text = ""
        for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
            switch value {
            case .integer(let integer): text += "\(key)=\(integer)\n"
            case .string(let string): text += "\(key)=\(string)\n"
            default: throw .unsupportedValue("only integers and strings")
            }
        }
        return Array(text.utf8)
    }

    func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue {
        var entries: [String: SyncValue] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw .malformedInput("'\(line)' is not key=value") }
            entries[String(parts[0])] = Int64(parts[1]).map(SyncValue.integer) ?? .string(String(parts[1]))
        }
        return .dictionary(entries)
    }
}

/// The answer the scripted server gives once its script has run out.
struct Greeting: Codable, Equatable {
    var count: Int64
    var note: String
}

/// The engine tests' server: a ``ScriptedFront`` answering the first
/// requests from its script, in front of a service that answers each request
/// let through with a 200 ``Greeting`` counting every request that arrived.
struct ScriptedServer {
    let front: ScriptedFront
    let clock: TestClock

    init(_ script: [SyncResponse], clock: TestClock) {
        self.front = ScriptedFront(answering: script, sleeper: clock)
        self.clock = clock
    }

    /// When each request arrived, as time since the clock started.
    var arrivals: [Duration] { front.requests.map(\.arrival) }
    /// Each request that arrived, scripted or let through, in order.
    var requests: [ScriptedFront.ArrivedRequest] { front.requests }

    /// An endpoint that reaches this server in-process, through `middleware` if given.
    func endpoint(retry: RetryPolicy, middleware: (any SyncClientMiddleware)? = nil) -> SyncEndpoint {
        let front = front
        let greeter = GreetingService { front.requests.count }
        let loopback = LoopbackTransport(service: greeter.with(front), authenticator: SingleAccountAuthenticator(account: "ada"))
        let transport: any SyncClientTransport = middleware.map { loopback.with($0) } ?? loopback
        return SyncEndpoint(transport: transport, codecs: CodecSet([LinesCodec()]), retry: retry, sleeper: clock)
    }
}

/// Answers every request with a 200 ``Greeting`` whose count is `count()`.
struct GreetingService: SyncService {
    let count: @Sendable () -> Int

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        SyncResponse(
            status: 200, contentType: "text/x-lines",
            body: try LinesCodec().encode(["count": .integer(Int64(count())), "note": "ok"]))
    }
}
