import SyncCore
import SyncTesting
import Synchronization
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

/// The answer the scripted service gives once its script has run out.
struct Greeting: Codable, Equatable {
    var count: Int64
    var note: String
}

/// A service that answers from a script — one scripted answer per request,
/// in order — and then, with the script run out, a 200 ``Greeting`` counting
/// the requests. It notes when each request arrived on the test clock.
final class ScriptedService: SyncService {
    private struct State {
        var script: [SyncResponse]
        var arrivals: [Duration] = []
        var requests: [String] = []
    }

    private let state: Mutex<State>
    let clock: TestClock

    init(_ script: [SyncResponse], clock: TestClock) {
        self.state = Mutex(State(script: script))
        self.clock = clock
    }

    /// When each request arrived, as time since the clock started.
    var arrivals: [Duration] { state.withLock { $0.arrivals } }
    /// `METHOD path` of each request, in order.
    var requests: [String] { state.withLock { $0.requests } }

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        let now = clock.now.offset
        let scripted = state.withLock { state -> SyncResponse? in
            state.arrivals.append(now)
            state.requests.append("\(request.method) \(request.path)")
            return state.script.isEmpty ? nil : state.script.removeFirst()
        }
        if let scripted { return scripted }
        return SyncResponse(
            status: 200, contentType: "text/x-lines",
            body: try LinesCodec().encode(["count": .integer(Int64(requests.count)), "note": "ok"]))
    }

    /// An endpoint that reaches this service in-process, through `middleware` if given.
    func endpoint(retry: RetryPolicy, middleware: (any SyncClientMiddleware)? = nil) -> SyncEndpoint {
        let loopback = LoopbackTransport(service: self, authenticator: SingleAccountAuthenticator(account: "ada"))
        let transport: any SyncClientTransport = middleware.map { loopback.with($0) } ?? loopback
        return SyncEndpoint(transport: transport, codecs: CodecSet([LinesCodec()]), retry: retry, clock: clock)
    }
}
