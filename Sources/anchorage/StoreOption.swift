import ArgumentParser
import FoundationEssentials
import SyncCore

/// A store named on the command line: `memory`, or `sqlite:PATH` (the default for servers and devices).
struct StoreOption: ExpressibleByArgument, CustomStringConvertible {
    enum Kind {
        case memory
        case sqlite(path: String)
    }

    let kind: Kind

    init?(argument: String) {
        if argument == "memory" {
            kind = .memory
        } else if argument.hasPrefix("sqlite:"), argument.count > "sqlite:".count {
            kind = .sqlite(path: String(argument.dropFirst("sqlite:".count)))
        } else if !argument.contains(":") {
            kind = .sqlite(path: argument)
        } else {
            return nil
        }
    }

    var description: String {
        switch kind {
        case .memory: "memory"
        case .sqlite(let path): "sqlite:\(path)"
        }
    }

    static var allValueStrings: [String] { ["memory", "sqlite:PATH"] }

    /// Opens the store.
    func open() throws -> any SyncStore {
        switch kind {
        case .memory:
            return MemoryStore()
        case .sqlite(let path):
            return try openSQLiteStore(path: path)
        }
    }
}
