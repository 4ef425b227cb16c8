import FileSync
import Foundation
import SyncCore
import SyncTesting
import Synchronization

/// Wraps a WebDAV transport and injects faults: a request dropped (never sent), cut (sent, its
/// answer lost), or answered with a server error, by a predicate or a seeded random plan.
final class FaultyTransport: WebDAVTransport {
    enum Fault: Sendable, Hashable {
        case drop
        case cut
        case serverError(Int)
    }

    let base: any WebDAVTransport
    private let state: Mutex<(generator: SeededGenerator, healed: Bool, faults: Int)>
    private let choose: @Sendable (WebDAVRequest, inout SeededGenerator) -> Fault?

    var baseURL: URL { base.baseURL }

    /// Requests matching `failing` get `fault`, until ``heal()``.
    init(_ base: any WebDAVTransport, failing: @escaping @Sendable (WebDAVRequest) -> Bool, with fault: Fault) {
        self.base = base
        self.state = Mutex((SeededGenerator(seed: 1), false, 0))
        self.choose = { request, _ in failing(request) ? fault : nil }
    }

    /// Each request gets a fault with `probability`, drop or cut evenly.
    init(_ base: any WebDAVTransport, seed: UInt64, probability: Double) {
        self.base = base
        self.state = Mutex((SeededGenerator(seed: seed), false, 0))
        self.choose = { _, generator in
            guard Double(generator.next() % 10_000) / 10_000 < probability else { return nil }
            return generator.next() % 2 == 0 ? .drop : .cut
        }
    }

    /// No more faults.
    func heal() { state.withLock { $0.healed = true } }

    /// Faults injected so far.
    var faults: Int { state.withLock { $0.faults } }

    func send(_ request: WebDAVRequest) async throws -> WebDAVResponse {
        let fault: Fault? = state.withLock { state in
            guard !state.healed else { return nil }
            let fault = choose(request, &state.generator)
            if fault != nil { state.faults += 1 }
            return fault
        }
        switch fault {
        case nil:
            return try await base.send(request)
        case .drop?:
            throw WebDAVError(.noAnswer, method: request.method, path: request.path, detail: "dropped by the test")
        case .cut?:
            _ = try await base.send(request)
            throw WebDAVError(.noAnswer, method: request.method, path: request.path, detail: "answer cut by the test")
        case .serverError(let status)?:
            return WebDAVResponse(status: status)
        }
    }
}
