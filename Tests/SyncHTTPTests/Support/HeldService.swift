import Synchronization
import SyncCore

/// Holds every request until ``release()``, then answers 204: stands for a
/// server that is too slow, without the test depending on how slow.
struct HeldService: SyncService {
    let gate = Gate()

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        await gate.wait()
        return SyncResponse(status: 204)
    }

    func release() { gate.open() }
}

/// A one-way gate: tasks wait until it opens, and pass straight through after.
final class Gate: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let passThrough = state.withLock { state in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if passThrough { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Answers every request 200 with `size` bytes.
/// Answers every request with `body`.
struct FixedAnswerService: SyncService {
    let body: [UInt8]

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        SyncResponse(status: 200, contentType: "text/plain", body: body)
    }
}

struct LargeAnswerService: SyncService {
    let size: Int

    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        SyncResponse(status: 200, contentType: "application/octet-stream", body: [UInt8](repeating: 0x61, count: size))
    }
}
