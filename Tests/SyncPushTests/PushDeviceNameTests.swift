import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

@testable import SyncPush

/// Device names use every character docs/push.md allows: capitals, digits, dots, underscores, colons
/// and dashes — the stream's query carries them percent-encoded once.
@Suite("Push: device names")
struct PushDeviceNameTests {
    @Test("a device named with capitals, dots, colons, underscores and dashes opens its stream", arguments: ["Phone-B.2", "Tablet:Home_1"])
    func streamOpens(_ name: String) async throws {
        let server = try await PushTestServer.start(store: MemoryStore())
        let device = PushDevice(.aquasync, token: name, server: server.url)
        let push = device.pushClient(server: server.url)
        let log = await EventLog.recording(push)
        let run = Task { try await push.run() }
        defer { run.cancel() }
        try await log.wait(for: "the first sync") { $0.isSync(of: "aquasync/Contact", .resync) }
        #expect(await log.events.contains { $0.isDisconnect } == false)
        await server.stop()
    }
}
