import FileSync
import Foundation
import SyncCore
import SyncTesting
import Synchronization
import Testing

/// Two syncs of one folder at once take turns (SyncCore's SyncGate), as every other client's do.
@Suite("FolderSync: one sync at a time")
struct FolderSyncGateTests {
    /// Holds every request until released, and counts the requests in flight.
    final class HeldTransport: WebDAVTransport {
        let base: any WebDAVTransport
        private let state = Mutex((inFlight: 0, most: 0, released: false, waiting: [CheckedContinuation<Void, Never>]()))
        var baseURL: URL { base.baseURL }
        init(_ base: any WebDAVTransport) { self.base = base }

        var mostInFlight: Int { state.withLock { $0.most } }
        var inFlight: Int { state.withLock { $0.inFlight } }

        func release() {
            let waiting = state.withLock { state in
                state.released = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        func send(_ request: WebDAVRequest) async throws -> WebDAVResponse {
            state.withLock { state in
                state.inFlight += 1
                state.most = max(state.most, state.inFlight)
            }
            defer { state.withLock { $0.inFlight -= 1 } }
            await withCheckedContinuation { continuation in
                let go = state.withLock { state -> Bool in
                    if state.released { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if go { continuation.resume() }
            }
            return try await base.send(request)
        }
    }

    @Test("a second sync waits at the gate until the first is done; no two requests are ever in flight")
    func takeTurns() async throws {
        let world = try await World()
        let held = HeldTransport(world.transport())
        let device = try world.device(transport: held)
        try Data("one".utf8).write(to: URL(fileURLWithPath: device.folder + "/a.txt"))
        let first = Task { try await device.sync() }
        #expect(await yieldUntil { held.inFlight == 1 }, "the first sync's first request")
        let second = Task { try await device.sync() }
        #expect(await yieldUntil { device.syncGate.waitingCount == 1 }, "the second sync never reached the gate")
        held.release()
        #expect(try await first.value.uploaded == ["a.txt"])
        #expect(try await second.value.uploaded.isEmpty)
        #expect(held.mostInFlight == 1)
    }
}
