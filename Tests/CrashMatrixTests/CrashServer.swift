#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SyncTesting
import TestSupport
import Testing

/// `anchorage serve` on a SQLite store file, which a test may kill with
/// `SIGKILL` and start again on the same file and the same port, so a device
/// whose sync is retrying finds it again at the address it was given.
actor CrashServer {
    /// `http://127.0.0.1:PORT`, the same after every restart.
    nonisolated let url: URL
    private let tool: AnchorageTool
    private let arguments: [String]
    private var process: ChildProcess.Running
    /// How many times the server was killed.
    private(set) var kills = 0

    /// Starts `anchorage serve` with `arguments` (the store, the users file, …) on a free port that no
    /// outgoing connection can take while the server is down (``LoopbackSocket/restartablePort()``).
    /// A port found free can be taken before the server binds it (the matrix's servers start side by side):
    /// the start is tried again on another port (``LoopbackSocket/retryingWhilePortTaken(_:)``).
    init(_ tool: AnchorageTool, arguments: [String]) async throws {
        let server = try await LoopbackSocket.retryingWhilePortTaken {
            try await tool.serve(arguments, port: LoopbackSocket.restartablePort())
        }
        self.tool = tool
        self.arguments = arguments
        self.url = server.url
        self.process = server.process
    }

    /// Kills the server with `SIGKILL`, at once, in whatever it was doing, and
    /// starts it again on the same store and port; returns when it serves again.
    func killAndRestart() async throws {
        let status = try await process.kill()
        #expect(status == 128 + SIGKILL, "the server was running when it was killed: \(status)")
        kills += 1
        let port = try #require(url.port, "\(url)")
        process = try await tool.serveAgain(arguments, port: port).process
    }

    /// Stops the server with `SIGTERM`; returns its exit status and what it wrote to standard error
    /// since it last started.
    func stop() async throws -> (status: Int32, errorText: String) {
        let status = try await process.terminate()
        return (status, String(decoding: process.standardError, as: UTF8.self))
    }
}
