import ArgumentParser
import Foundation
import SyncCore
import SyncSQLite

/// A store named on the command line: `memory`, `sqlite:PATH` (the default
/// for servers and devices), or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
struct StoreOption: ExpressibleByArgument, CustomStringConvertible {
    enum Kind {
        case memory
        case sqlite(path: String)
        case postgres(PostgresLocation)
    }

    let kind: Kind

    init?(argument: String) {
        if argument == "memory" {
            kind = .memory
        } else if argument.hasPrefix("sqlite:"), argument.count > "sqlite:".count {
            kind = .sqlite(path: String(argument.dropFirst("sqlite:".count)))
        } else if argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://") {
            guard let location = PostgresLocation(url: argument) else { return nil }
            kind = .postgres(location)
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
        case .postgres(let location): location.description
        }
    }

    static var allValueStrings: [String] { ["memory", "sqlite:PATH", "postgres://USER@HOST:PORT/DATABASE"] }

    /// Opens the store, hands it to `body`, and closes it when `body` returns or throws.
    func withStore<Result: Sendable>(_ body: (any SyncStore) async throws -> Result) async throws -> Result {
        switch kind {
        case .memory:
            return try await body(MemoryStore())
        case .sqlite(let path):
            // Closed here, at a known point, rather than whenever the last reference goes.
            let store = try openSQLiteStore(path: path)
            let result: Result
            do {
                result = try await body(store)
            } catch {
                try? store.close()
                throw error
            }
            try? store.close()
            return result
        case .postgres(let location):
            return try await withPostgresStore(at: location, body)
        }
    }
}

/// A PostgreSQL database named by a `postgres://` URL.
struct PostgresLocation: CustomStringConvertible {
    var host: String
    var port: Int
    var username: String
    var password: String?
    var database: String

    /// Reads `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`; the password
    /// may also come from the `PGPASSWORD` environment variable.
    init?(url: String) {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty,
            let username = components.user, !username.isEmpty
        else { return nil }
        let database = String(components.path.drop { $0 == "/" })
        self.host = host
        self.port = components.port ?? 5432
        self.username = username
        self.password = components.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"]
        self.database = database.isEmpty ? username : database
    }

    /// The URL without its password.
    var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }
}
