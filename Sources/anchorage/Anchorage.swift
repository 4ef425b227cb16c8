import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import SyncCore

/// The `anchorage` command-line tool.
@main
struct Anchorage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anchorage",
        abstract: "Build and run data-synchronization servers and clients.",
        version: AnchorageVersion.current,
        subcommands: [Serve.self, Sync.self, Records.self, Conflicts.self, Users.self, Convert.self, Sizes.self, Files.self, Notes.self]
    )

    /// Runs the command line. Help and `--version` print as usual; a mistake on
    /// the command line is one `anchorage: …` line on standard error and exit
    /// status 64 (EX_USAGE), without the usage text (`--help` shows it).
    static func main() async {
        // The server's tasks run on NIO's event loops, so a request's task runs on the thread of its
        // connection instead of hopping to the cooperative pool and back (docs/custom-stack.md). Other
        // commands keep the pool: an event loop keeps the tasks started on it, and their parallel work
        // (checking an import, applying one page while fetching the next) would share one thread.
        if CommandLine.arguments.dropFirst().first == "serve" {
            _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        }
        do {
            // Parsed without `await`, so that a command without `async` (`convert`, `sizes`, `users`) runs
            // on the main thread: with glibc a worker thread's malloc arena grows a page at a time, one
            // mprotect call each (8,800 of them to convert the standard contacts), the main one in large steps.
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let status = exitCode(for: error)
            // Help, the version, and the statuses our commands chose (their line is already printed).
            if status == .success || error is ExitCode { exit(withError: error) }
            let message = message(for: error).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
            FileHandle.standardError.write(Data("anchorage: \(message.isEmpty ? "\(type(of: error))" : message)\n".utf8))
            Foundation.exit(status.rawValue)
        }
    }
}
