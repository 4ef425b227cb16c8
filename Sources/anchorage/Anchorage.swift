import ArgumentParser
import SyncCore

/// The `anchorage` command-line tool.
@main
struct Anchorage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anchorage",
        abstract: "Build and run data-synchronization servers and clients.",
        version: AnchorageVersion.current,
        subcommands: [Serve.self, Sync.self, Records.self, Users.self, Convert.self, Sizes.self]
    )
}
