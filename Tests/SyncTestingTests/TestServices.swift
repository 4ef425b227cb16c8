import SyncCore
import Synchronization

/// A service that counts the requests it processes, remembers their paths in
/// order, and answers each with its number (1, 2, …) as the body.
final class CountingService: SyncService {
    private let state = Mutex<[String]>([])

    /// How many requests the service processed.
    var processed: Int { state.withLock { $0.count } }

    /// The paths of the processed requests, in order.
    var paths: [String] { state.withLock { $0 } }

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        let number = state.withLock { paths in
            paths.append(request.path)
            return paths.count
        }
        return .text(String(number), status: 200)
    }
}

extension SyncResponse {
    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A transport calling `service` in-process, with `middleware` in front.
func loopback(to service: CountingService, through middleware: any SyncClientMiddleware) -> MiddlewareTransport {
    LoopbackTransport(service: service, authenticator: SingleAccountAuthenticator(account: "ada")).with(middleware)
}

/// A value behind a lock, shareable between tasks.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value { mutex.withLock { $0 } }
    func update<T>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}
