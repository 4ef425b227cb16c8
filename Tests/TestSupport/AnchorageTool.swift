import Foundation
import SyncTesting

/// The `anchorage` executable SwiftPM built beside the test bundle, run the
/// way a user runs it.
///
/// ```swift
/// let tool = try AnchorageTool()
/// let server = try await tool.serve(["--store", "memory", "--users", users])
/// let outcome = try await tool.run(["sync", "--server", server.url.absoluteString, …])
/// ```
public struct AnchorageTool: Sendable {
    /// The executable's path.
    public let path: String

    /// Finds the built executable.
    /// - Throws: ``ChildProcess/LaunchError`` when it is not there: `swift build --build-tests` builds it,
    ///   so a missing tool is a broken build, never a reason to skip.
    public init() throws {
        guard let path = ChildProcess.builtExecutable(named: "anchorage") else {
            throw ChildProcess.LaunchError(description: "the anchorage executable was not found beside the test bundle")
        }
        self.path = path
    }

    /// Runs `anchorage ARGUMENTS` to completion.
    public func run(
        _ arguments: [String], input: [UInt8] = [], environment: [String: String] = [:], workingDirectory: String? = nil
    ) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(
            path, arguments: arguments, input: input, environment: environment, workingDirectory: workingDirectory)
    }

    /// A running `anchorage serve` and the address it listens on.
    public struct Server: Sendable {
        /// The process.
        public let process: ChildProcess.Running
        /// `http://127.0.0.1:PORT`, or `https://…` when it serves TLS.
        public let url: URL
    }

    /// Starts `anchorage serve --port PORT ARGUMENTS` (by default a free port) and waits until it prints
    /// the address it serves on (`http://` or, with `--tls-cert`, `https://`).
    /// - Parameter descriptorLimit: When set, the server runs with this limit on open descriptors, soft
    ///   and hard (`ulimit -n`), so that it cannot raise it.
    public func serve(
        _ arguments: [String], port: Int = 0, environment: [String: String] = [:], workingDirectory: String? = nil,
        descriptorLimit: Int? = nil
    ) async throws -> Server {
        let command = ["serve", "--port", String(port)] + arguments
        let process =
            if let descriptorLimit {
                try ChildProcess.start(
                    "/bin/sh", arguments: ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", path] + command,
                    environment: environment, workingDirectory: workingDirectory)
            } else {
                try ChildProcess.start(path, arguments: command, environment: environment, workingDirectory: workingDirectory)
            }
        let url = try await process.waitForOutputLine(timeout: .seconds(300)) { line in
            line.contains("serving on")
                ? line.split(separator: " ").first { $0.hasPrefix("http://") || $0.hasPrefix("https://") }
                    .flatMap { URL(string: String($0)) } : nil
        }
        return Server(process: process, url: url)
    }

    /// Starts `anchorage serve` again on `port`, the port of one that was just stopped or killed, as
    /// ``serve(_:port:environment:workingDirectory:)`` does, while the old server's sockets may still be
    /// closing (``LoopbackSocket/retryingWhilePortTaken(_:)``).
    public func serveAgain(_ arguments: [String], port: Int) async throws -> Server {
        try await LoopbackSocket.retryingWhilePortTaken { try await serve(arguments, port: port) }
    }
}
