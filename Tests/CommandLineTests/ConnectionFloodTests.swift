import Aquasync
import Foundation
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// `anchorage serve` under a flood of connections, with a small descriptor limit.
@Suite("anchorage serve under a flood of connections")
struct ConnectionFloodTests {
    @Test("a flood of twice its descriptors, twenty times over: alive each time, served at once after, every acknowledged write stored")
    func flood() async throws {
        let descriptorLimit = 256
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("serve-flood")
        let added = try await tool.run(
            ["users", "add", "ada", "--iterations", "1000"], input: Array("secret\n".utf8), workingDirectory: folder.path)
        try #require(added.status == 0, "anchorage users add: \(added.errorText)")
        let server = try await tool.serve(
            ["--store", "sqlite:server.sqlite", "--log-level", "info"], workingDirectory: folder.path,
            descriptorLimit: descriptorLimit)
        let port = try #require(server.url.port)
        let cap = DescriptorLimit.connectionCap(limit: descriptorLimit)
        let log = String(decoding: server.process.standardError, as: UTF8.self)
        #expect(log.contains("descriptor limit \(descriptorLimit); at most \(cap) connections open at once"), "\(log)")

        let transport = HTTPClientTransport(baseURL: server.url)
        let credentials = CredentialsMiddleware(.basic(username: "ada", password: "secret"))
        let writer = AquasyncClient(store: MemoryStore(), transport: transport.with(credentials), codec: JSONCodec())
        var saved: [String] = []
        var acknowledged: [String] = []
        saved.append(try await writer.save("Note", fields: ["n": 0]))
        try await writer.sync()
        acknowledged = saved
        for round in 1...20 {
            // The write is saved locally first; its sync meets the flood, which holds every place the server has.
            saved.append(try await writer.save("Note", fields: ["n": .integer(Int64(round))]))
            let flood = try LoopbackSocket.flood(port: port, count: 2 * descriptorLimit)
            if round == 1 {
                let highest = try await Self.descriptorsUnderFlood(of: server.process.pid, reaching: cap)
                #expect(highest >= cap, "the flood filled the server up to its cap")
                #expect(highest < descriptorLimit, "and its descriptors stayed below the limit")
            }
            async let synced = (try? await writer.sync()) != nil
            LoopbackSocket.closeAll(flood)
            if await synced { acknowledged = saved }
            let health = try await transport.send(SyncRequest(method: .get, path: "/health"))
            #expect(health.status == 200, "round \(round): /health after the flood")
        }
        try await writer.sync()
        acknowledged = saved
        #expect(acknowledged.count == 21)

        // Every acknowledged write is on the server: a new device pulls them all.
        let reader = AquasyncClient(store: MemoryStore(), transport: transport.with(credentials), codec: JSONCodec())
        try await reader.sync()
        for gid in acknowledged {
            #expect(try await reader.object("Note", gid: gid) != nil, "note \(gid) is on the server")
        }
        try await transport.shutdown()
        #expect(try await server.process.terminate() == 0, "the server stopped cleanly on SIGTERM")
    }

    /// The most descriptors process `pid` holds while a flood lasts: watched until the count reaches
    /// `cap` (the connections the server takes), then for 300 ms more, in which it must not grow past
    /// its reserve.
    static func descriptorsUnderFlood(of pid: pid_t, reaching cap: Int) async throws -> Int {
        func open() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0 }
        var highest = 0
        let filled = ContinuousClock.now.advanced(by: .seconds(10))
        while highest < cap, ContinuousClock.now < filled {
            highest = max(highest, open())
            try await Task.sleep(for: .milliseconds(5))
        }
        let watched = ContinuousClock.now.advanced(by: .milliseconds(300))
        while ContinuousClock.now < watched {
            highest = max(highest, open())
            try await Task.sleep(for: .milliseconds(5))
        }
        return highest
    }
}
